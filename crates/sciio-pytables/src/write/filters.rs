//! PyTables' `Filters` on the write side: the packed `FILTERS` group attribute, the HDF5
//! pipeline PyTables builds for a leaf (`H5TB-opt.c`, `H5ARRAY.c`), and chunk shapes computed
//! the way `Leaf._calc_chunkshape` does.

use super::cpu_caches::CpuCaches;
use sciio_core::{Error, Result};
use sciio_hdf5::filters::id;
use sciio_hdf5::write::{blosc2_blocksize, BloscCodec, FilterStage};
use sciio_hdf5::H5Type;

/// A compression library, as PyTables names them (`zlib`, `lzo`, `bzip2`, `blosc[:codec]`,
/// `blosc2[:codec]`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Complib {
    /// zlib (HDF5's deflate filter).
    Zlib,
    /// LZO (filter 305).
    Lzo,
    /// bzip2 (filter 307).
    Bzip2,
    /// Blosc 1 (filter 32001); `None`: plain `blosc` (BloscLZ, codec not recorded).
    Blosc(Option<BloscCodec>),
    /// Blosc 2 (filter 32026); `None`: plain `blosc2`.
    Blosc2(Option<BloscCodec>),
    /// LZF (filter 32000), h5py's compressor (`compression="lzf"`; it has no level). PyTables
    /// has no LZF: a group's packed `FILTERS` records no compression for it.
    Lzf,
}

impl Complib {
    /// PyTables' name (`"blosc2:lz4"`...).
    pub fn name(&self) -> String {
        match self {
            Complib::Zlib => "zlib".into(),
            Complib::Lzo => "lzo".into(),
            Complib::Bzip2 => "bzip2".into(),
            Complib::Lzf => "lzf".into(),
            Complib::Blosc(None) => "blosc".into(),
            Complib::Blosc2(None) => "blosc2".into(),
            Complib::Blosc(Some(c)) => format!("blosc:{}", c.name()),
            Complib::Blosc2(Some(c)) => format!("blosc2:{}", c.name()),
        }
    }

    /// Parses a PyTables complib name.
    pub fn parse(name: &str) -> Result<Complib> {
        let codec = |c: &str| {
            BloscCodec::from_name(c)
                .ok_or_else(|| Error::invalid_input(format!("unknown blosc codec {c:?}")))
        };
        Ok(match name.split_once(':') {
            None => match name {
                "zlib" => Complib::Zlib,
                "lzo" => Complib::Lzo,
                "bzip2" => Complib::Bzip2,
                "lzf" => Complib::Lzf,
                "blosc" => Complib::Blosc(None),
                "blosc2" => Complib::Blosc2(None),
                other => {
                    return Err(Error::invalid_input(format!(
                        "unknown compression library {other:?}"
                    )))
                }
            },
            Some(("blosc", c)) => Complib::Blosc(Some(codec(c)?)),
            Some(("blosc2", c)) => Complib::Blosc2(Some(codec(c)?)),
            Some(_) => {
                return Err(Error::invalid_input(format!(
                    "unknown compression library {name:?}"
                )))
            }
        })
    }

    /// The id PyTables packs into `FILTERS` (index in `tables.filters.all_complibs`, + 1);
    /// 0 for LZF, which PyTables does not know.
    fn packed_id(&self) -> u8 {
        let codec_index = |c: &Option<BloscCodec>| match c {
            None | Some(BloscCodec::BloscLz) => 0,
            Some(BloscCodec::Lz4) => 1,
            Some(BloscCodec::Lz4Hc) => 2,
            Some(BloscCodec::Zlib) | Some(BloscCodec::Snappy) => 3,
            Some(BloscCodec::Zstd) => 4,
        };
        match self {
            Complib::Zlib => 1,
            Complib::Lzo => 2,
            Complib::Bzip2 => 3,
            Complib::Lzf => 0,
            Complib::Blosc(None) => 4,
            Complib::Blosc2(None) => 5,
            Complib::Blosc(c) => 6 + codec_index(c),
            Complib::Blosc2(c) => 11 + codec_index(c),
        }
    }
}

/// A PyTables `Filters`: what compression a leaf gets.
///
/// Default: no compression (`complevel` 0), zlib as the library, shuffle on (it only applies
/// when compressing) — PyTables' own defaults.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Filters {
    /// Compression level 0–9 (0: no compression).
    pub complevel: u8,
    /// Compression library.
    pub complib: Complib,
    /// Byte shuffle before compressing.
    pub shuffle: bool,
    /// Bit shuffle (Blosc/Blosc2 only).
    pub bitshuffle: bool,
    /// Fletcher-32 checksum.
    pub fletcher32: bool,
}

impl Default for Filters {
    fn default() -> Self {
        Filters {
            complevel: 0,
            complib: Complib::Zlib,
            shuffle: true,
            bitshuffle: false,
            fletcher32: false,
        }
    }
}

impl Filters {
    /// Compression with `complib` at `complevel`, shuffle on.
    pub fn new(complevel: u8, complib: Complib) -> Filters {
        Filters {
            complevel: complevel.min(9),
            complib,
            ..Filters::default()
        }
    }

    /// Parses sciio's `--compress` spelling: comma-separated `shuffle`, `bitshuffle`,
    /// `noshuffle`, `fletcher32` and one `lib[:codec][:level]` (`zlib:5`, `blosc2:lz4:5`,
    /// `bzip2:9`; level 5 when omitted). Shuffle is on unless `noshuffle` or `bitshuffle`.
    ///
    /// ```
    /// use sciio_pytables::write::{Complib, Filters};
    /// let f = Filters::parse("fletcher32,bzip2:9")?;
    /// assert_eq!((f.complevel, f.complib, f.fletcher32), (9, Complib::Bzip2, true));
    /// # Ok::<(), sciio_core::Error>(())
    /// ```
    pub fn parse(spec: &str) -> Result<Filters> {
        let mut f = Filters {
            shuffle: true,
            ..Filters::default()
        };
        let mut explicit_shuffle = false;
        for part in spec.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            match part {
                "shuffle" => explicit_shuffle = true,
                "noshuffle" => f.shuffle = false,
                "bitshuffle" => {
                    f.bitshuffle = true;
                    f.shuffle = false;
                }
                "fletcher32" => f.fletcher32 = true,
                lib => {
                    let (name, level) = match lib.rsplit_once(':') {
                        Some((n, l)) if l.chars().all(|c| c.is_ascii_digit()) => {
                            let level: u8 = l.parse().map_err(|_| {
                                Error::invalid_input(format!("bad level in {lib:?}"))
                            })?;
                            if level > 9 {
                                return Err(Error::invalid_input(format!(
                                    "compression level {level} is not 0–9"
                                )));
                            }
                            (n, level)
                        }
                        _ => (lib, 5),
                    };
                    f.complib = Complib::parse(name)?;
                    f.complevel = level;
                }
            }
        }
        if explicit_shuffle {
            f.shuffle = true;
        }
        Ok(f)
    }

    /// The packed 64-bit `FILTERS` attribute PyTables writes on groups.
    ///
    /// ```
    /// use sciio_pytables::write::{Complib, Filters};
    /// let f = Filters { fletcher32: true, ..Filters::new(5, Complib::Zlib) };
    /// assert_eq!(f.pack(), 196869); // tables.Filters(5, 'zlib', shuffle=True, fletcher32=True)._pack()
    /// ```
    pub fn pack(&self) -> i64 {
        let mut flags = 0i64;
        if self.shuffle {
            flags |= 1;
        }
        if self.fletcher32 {
            flags |= 2;
        }
        if self.bitshuffle {
            flags |= 8;
        }
        let lib = if self.complevel > 0 {
            i64::from(self.complib.packed_id())
        } else {
            0
        };
        // PyTables refuses a level without a library (LZF): it reads as uncompressed.
        let level = if lib == 0 {
            0
        } else {
            i64::from(self.complevel)
        };
        (flags << 16) | (lib << 8) | level
    }

    /// Whether any filter applies.
    pub fn is_active(&self) -> bool {
        self.complevel > 0 || self.fletcher32
    }

    /// The HDF5 pipeline PyTables builds for a leaf of element type `ty` with chunks of
    /// `chunk` elements: shuffle (not for Blosc, which shuffles inside), the compressor with
    /// PyTables' client data, Fletcher-32 last. `class` is PyTables' object tag (Table 0,
    /// EArray 2, VLArray 3, CArray 4) and `version` the node's VERSION (`"2.7"`).
    pub fn pipeline(
        &self,
        ty: &H5Type,
        chunk: &[u64],
        class: u32,
        version: &str,
    ) -> Vec<FilterStage> {
        let mut out = Vec::new();
        let typesize = ty.size();
        let basesize = match ty {
            H5Type::Array { base, .. } => base.size(),
            _ => typesize,
        };
        let chunk_bytes = chunk.iter().product::<u64>() as usize * typesize;
        let blosc_shuffle = if self.shuffle {
            1
        } else if self.bitshuffle {
            2
        } else {
            0
        };
        let level = u32::from(self.complevel);
        let version10 = version
            .parse::<f64>()
            .map_or(0, |v| (v * 10.0).round() as u32);
        if self.complevel > 0 {
            if self.shuffle && !matches!(self.complib, Complib::Blosc(_) | Complib::Blosc2(_)) {
                out.push(FilterStage::shuffle(typesize));
            }
            let optional = |id, cd_values| FilterStage {
                id,
                cd_values,
                optional: true,
            };
            match self.complib {
                Complib::Zlib => out.push(FilterStage::deflate(level)),
                Complib::Lzo => out.push(optional(id::LZO, vec![level, version10, class])),
                Complib::Bzip2 => out.push(optional(id::BZIP2, vec![level, version10, class])),
                Complib::Lzf => out.push(FilterStage::lzf(chunk_bytes)),
                Complib::Blosc(codec) => {
                    // blosc_set_local: filter version 2, Blosc format 2, type size, chunk bytes.
                    let mut cd = vec![
                        2,
                        2,
                        basesize as u32,
                        chunk_bytes as u32,
                        level,
                        blosc_shuffle,
                    ];
                    if let Some(c) = codec {
                        cd.push(c.code());
                    }
                    out.push(optional(id::BLOSC, cd));
                }
                Complib::Blosc2(codec) => {
                    let block = blosc2_blocksize(chunk_bytes, typesize, level, codec);
                    let mut cd = vec![
                        1,
                        block,
                        basesize as u32,
                        chunk_bytes as u32,
                        level,
                        blosc_shuffle,
                    ];
                    if let Some(c) = codec {
                        cd.push(c.code());
                    }
                    if chunk.len() > 1 && chunk.len() <= 8 {
                        // blosc2_set_local records the chunk rank and shape for n-d chunks.
                        cd.resize(7, 0);
                        cd.push(chunk.len() as u32);
                        cd.extend(chunk.iter().map(|&d| d as u32));
                    }
                    out.push(optional(id::BLOSC2, cd));
                }
            }
        }
        if self.fletcher32 {
            out.push(FilterStage::fletcher32());
        }
        out
    }
}

/// `tables.leaf.calc_chunksize`: the chunk size in bytes PyTables aims at for a dataset of
/// `expected_mb` megabytes.
fn calc_chunksize(expected_mb: u64) -> u64 {
    let mb = expected_mb.clamp(1, 10_u64.pow(7));
    let zone = (mb as f64).log10().floor() as i32;
    let expected = 10f64.powi(zone);
    let cs = 8 * 1024 * (2f64.powf(expected.log10()) as u64);
    cs * 8
}

/// `Leaf._calc_chunkshape`: the chunk shape PyTables picks for a leaf of `shape` growing along
/// `maindim`, `expected_rows` rows of `rowsize` bytes, elements of `itemsize` bytes. Blosc2
/// Tables/CArrays/EArrays (`blosc2`: the machine's caches) get chunks as large as the L3
/// cache, or 16 times larger ones without a usable L3 size ([`CpuCaches::blosc2_chunksize`]).
pub fn calc_chunkshape(
    shape: &[u64],
    maindim: usize,
    expected_rows: u64,
    rowsize: u64,
    itemsize: u64,
    blosc2: Option<CpuCaches>,
) -> Vec<u64> {
    if shape.is_empty() {
        return vec![1];
    }
    let expected_mb = expected_rows.saturating_mul(rowsize) / (1024 * 1024);
    let mut chunksize = calc_chunksize(expected_mb);
    if let Some(caches) = blosc2 {
        chunksize = caches.blosc2_chunksize(chunksize);
    }
    let nitems = (chunksize / itemsize.max(1)).max(1);
    let mut chunk = shape.to_vec();
    chunk[maindim] = 1;
    let rest: u64 = chunk.iter().product();
    if rest <= nitems {
        chunk[maindim] = nitems / rest;
    } else {
        let mut done = false;
        for j in 0..chunk.len() {
            chunk[j] = 1;
            let n: u64 = chunk.iter().product();
            if n <= nitems {
                chunk[j] = nitems / n;
                done = true;
                break;
            }
        }
        if !done {
            if let Some(last) = chunk.last_mut() {
                *last = nitems;
            }
        }
    }
    chunk
}

/// `VLArray._calc_chunkshape`: rows per chunk for atoms of `elemsize` bytes.
pub fn calc_vl_chunkshape(expected_rows: u64, elemsize: u64) -> u64 {
    let expected_mb = (expected_rows as f64 * elemsize as f64 / (1024.0 * 1024.0)) as u64;
    (calc_chunksize(expected_mb) / elemsize.max(1)).max(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunkshapes_match_pytables() {
        // Values printed by PyTables 3.11 for the same parameters.
        assert_eq!(calc_chunkshape(&[0], 0, 10_000, 78, 78, None), vec![840]);
        assert_eq!(
            calc_chunkshape(&[0, 4], 0, 1000, 16, 4, None),
            vec![4096, 4]
        );
        assert_eq!(
            calc_chunkshape(&[100, 10], 0, 100, 80, 8, Some(CpuCaches::default())),
            vec![13107, 10]
        );
        // A machine whose lscpu says L2 4 MiB, L3 480 MiB: PyTables 3.11 picked (5, 12582912)
        // for a blosc2 EArray of shape (5, 0) growing along axis 1.
        let caches = CpuCaches {
            l2: Some(4 << 20),
            l3: Some(480 << 20),
        };
        assert_eq!(
            calc_chunkshape(&[5, 0], 1, 1000, 40, 8, Some(caches)),
            vec![5, 12582912]
        );
        assert_eq!(calc_vl_chunkshape(1000, 4), 16384);
        assert_eq!(calc_vl_chunkshape(1000, 1), 65536);
    }

    #[test]
    fn packs_like_pytables() {
        assert_eq!(
            Filters::parse("shuffle,zlib:5,fletcher32").unwrap().pack(),
            196869
        );
        assert_eq!(Filters::parse("blosc2:lz4:5").unwrap().pack(), 0x1_0C_05);
        assert_eq!(Filters::parse("").unwrap().pack(), 0x1_00_00);
    }
}
