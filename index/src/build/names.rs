//! The name merge: each shard's accumulated names into its FST and postings.

use super::*;

/// Merges each shard's runs into its FST and entries file, the shards at the same time, and
/// counts the names into `meta`.
pub(super) fn merge_names(
    out_dir: &Path,
    inputs: &[Input],
    accumulators: Vec<Accumulator>,
    facts: &DefFacts,
    meta: &mut SegmentMeta,
) -> Result<(), IndexError> {
    let defs_map = crate::disk::map(out_dir, "defs.dat", None)?;
    let defs_dat: &[u8] = &defs_map;
    let ranks: Vec<PathRank> = inputs.iter().map(|i| PathRank::of(&i.file.path)).collect();
    let path_rank = |file: u32| {
        ranks
            .get(file as usize)
            .copied()
            .unwrap_or_else(|| PathRank::of(""))
    };
    // Each shard merges its runs and builds its FST (and its defined names' search table) at
    // the same time as the others.
    let summaries: Vec<Result<_, IndexError>> = std::thread::scope(|s| {
        let handles: Vec<_> = accumulators
            .into_iter()
            .enumerate()
            .map(|(k, acc)| {
                s.spawn(move || {
                    let mut defined = DefinedWriter::new(out_dir, k)?;
                    let summary = acc.finish(
                        &out_dir.join(format!("names-{k}.fst")),
                        &out_dir.join(format!("names-{k}.dat")),
                        defs_dat,
                        &mut |name, offset, defs, macro_file| {
                            let decoded = defs.iter().filter_map(|&off| facts.get(off));
                            match describe(name, decoded, macro_file, path_rank) {
                                Some(info) => defined.add(name, offset, info),
                                None => Ok(()),
                            }
                        },
                    )?;
                    Ok((summary, defined.finish()?))
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| match h.join() {
                Ok(r) => r.map_err(write_error(out_dir)),
                Err(_) => Err(IndexError::Build("a name merge thread panicked".into())),
            })
            .collect()
    });
    for summary in summaries {
        let (summary, ()) = summary?;
        meta.names += summary.names;
        meta.occurrences += summary.occurrences;
        meta.runs += summary.runs;
    }
    Ok(())
}
