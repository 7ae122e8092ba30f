//! The CPU cache sizes PyTables sizes Blosc2 chunks by.
//!
//! `Leaf._calc_chunkshape` makes a Blosc2 Table/CArray/EArray chunk as large as the L3 cache
//! when py-cpuinfo reports integer L2 and L3 sizes with L3 > L2 (else 16 times its usual
//! size). PyTables reads those sizes from its cache file `~/.pytables-cpuinfo.json` when
//! that exists, else from py-cpuinfo, which takes them from `lscpu`: per level, the size of
//! one cache times the number of its instances. sciio reads the same file, else the same
//! totals from Linux's sysfs (what `lscpu` reads), so its chunks match PyTables' on the
//! machine where both run.

use std::collections::BTreeSet;
use std::fs;
use std::path::Path;
use std::sync::OnceLock;

/// L2 and L3 cache sizes in bytes, as PyTables sees them (`None`: not an integer there).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct CpuCaches {
    /// `l2_cache_size`.
    pub l2: Option<u64>,
    /// `l3_cache_size`.
    pub l3: Option<u64>,
}

impl CpuCaches {
    /// This machine's sizes, looked up once per process.
    pub fn of_this_machine() -> CpuCaches {
        static CACHES: OnceLock<CpuCaches> = OnceLock::new();
        *CACHES.get_or_init(|| {
            let home = std::env::var_os("HOME").map(std::path::PathBuf::from);
            home.and_then(|h| from_pytables_cache(&h.join(".pytables-cpuinfo.json")))
                .unwrap_or_else(|| from_sysfs(Path::new("/sys/devices/system/cpu")))
        })
    }

    /// The Blosc2 chunk size in bytes PyTables picks from its usual `chunksize`.
    pub fn blosc2_chunksize(&self, chunksize: u64) -> u64 {
        let size = match (self.l2, self.l3) {
            (Some(l2), Some(l3)) if l3 > l2 => l3,
            _ => chunksize.saturating_mul(16),
        };
        // BLOSC2_MAX_BUFFERSIZE
        size.min(2u64.pow(31) - 32)
    }
}

/// The sizes in PyTables' own cache file, when it exists and parses (PyTables would fail on
/// a file that does not parse; sciio falls back to sysfs instead).
fn from_pytables_cache(path: &Path) -> Option<CpuCaches> {
    let text = fs::read_to_string(path).ok()?;
    let doc: serde_json::Value = serde_json::from_str(&text).ok()?;
    // `type(x) is int`: a JSON integer, not a string such as "4096 KB".
    let int = |key: &str| doc.get(key).and_then(serde_json::Value::as_u64);
    Some(CpuCaches {
        l2: int("l2_cache_size"),
        l3: int("l3_cache_size"),
    })
}

/// `lscpu`'s totals: per level, the sizes of the distinct unified/data caches summed.
fn from_sysfs(cpus: &Path) -> CpuCaches {
    let mut seen = BTreeSet::new();
    let mut totals = [0u64; 4];
    let Ok(entries) = fs::read_dir(cpus) else {
        return CpuCaches::default();
    };
    for cpu in entries.flatten() {
        let name = cpu.file_name();
        let name = name.to_string_lossy();
        let is_cpu = name
            .strip_prefix("cpu")
            .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()));
        if !is_cpu {
            continue;
        }
        let Ok(indexes) = fs::read_dir(cpu.path().join("cache")) else {
            continue;
        };
        for index in indexes.flatten() {
            let dir = index.path();
            let read = |f: &str| fs::read_to_string(dir.join(f)).map(|s| s.trim().to_string());
            let (Ok(level), Ok(kind), Ok(size)) = (read("level"), read("type"), read("size"))
            else {
                continue;
            };
            let shared = read("shared_cpu_list").unwrap_or_else(|_| name.to_string());
            let (Ok(level), Some(bytes)) = (level.parse::<usize>(), parse_size(&size)) else {
                continue;
            };
            if kind == "Instruction" || !(2..=3).contains(&level) {
                continue;
            }
            if seen.insert((level, kind, shared)) {
                if let Some(total) = totals.get_mut(level) {
                    *total = total.saturating_add(bytes);
                }
            }
        }
    }
    let known = |n: u64| (n > 0).then_some(n);
    CpuCaches {
        l2: known(totals[2]),
        l3: known(totals[3]),
    }
}

/// A sysfs cache size: `2048K`, `32M`, or bytes.
fn parse_size(text: &str) -> Option<u64> {
    let (digits, unit) = match text.find(|c: char| !c.is_ascii_digit()) {
        Some(i) => text.split_at(i),
        None => (text, ""),
    };
    let n: u64 = digits.parse().ok()?;
    let scale = match unit {
        "" => 1,
        "K" => 1 << 10,
        "M" => 1 << 20,
        "G" => 1 << 30,
        _ => return None,
    };
    n.checked_mul(scale)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blosc2_chunks_are_l3_sized_only_when_l3_exceeds_l2() {
        let none = CpuCaches::default();
        assert_eq!(none.blosc2_chunksize(65536), 65536 * 16);
        let big = CpuCaches {
            l2: Some(4 << 20),
            l3: Some(480 << 20),
        };
        assert_eq!(big.blosc2_chunksize(65536), 480 << 20);
        let odd = CpuCaches {
            l2: Some(8 << 20),
            l3: Some(4 << 20),
        };
        assert_eq!(odd.blosc2_chunksize(65536), 65536 * 16);
        let huge = CpuCaches {
            l2: Some(1),
            l3: Some(1 << 40),
        };
        assert_eq!(huge.blosc2_chunksize(65536), (1 << 31) - 32);
    }

    #[test]
    fn reads_pytables_cache_file_and_sysfs_layouts() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("c.json");
        fs::write(
            &file,
            r#"{"l2_cache_size": 4194304, "l3_cache_size": "480 MiB"}"#,
        )
        .unwrap();
        assert_eq!(
            from_pytables_cache(&file),
            Some(CpuCaches {
                l2: Some(4194304),
                l3: None
            })
        );
        let cpus = dir.path().join("cpu");
        for (cpu, index, level, kind, size, shared) in [
            ("cpu0", "index0", "1", "Data", "48K", "0"),
            ("cpu0", "index2", "2", "Unified", "2048K", "0"),
            ("cpu0", "index3", "3", "Unified", "491520K", "0-1"),
            ("cpu1", "index2", "2", "Unified", "2048K", "1"),
            ("cpu1", "index3", "3", "Unified", "491520K", "0-1"),
        ] {
            let d = cpus.join(cpu).join("cache").join(index);
            fs::create_dir_all(&d).unwrap();
            for (f, v) in [
                ("level", level),
                ("type", kind),
                ("size", size),
                ("shared_cpu_list", shared),
            ] {
                fs::write(d.join(f), format!("{v}\n")).unwrap();
            }
        }
        fs::create_dir_all(cpus.join("cpufreq")).unwrap();
        assert_eq!(
            from_sysfs(&cpus),
            CpuCaches {
                l2: Some(4 << 20),
                l3: Some(480 << 20)
            }
        );
    }
}
