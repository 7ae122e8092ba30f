//! What a conversion is asked to do and what it did ([`ConvertOptions`], [`ConvertSummary`]),
//! shared by [`convert`](crate::convert()) and the per-format conversion modules below it.

use sciio_core::{Error, Result};
use sciio_zip::Compression;

use crate::compress::CompressSpec;
use crate::format::Format;
use crate::plan::LeftOut;

/// The key of a Parquet file's key-value metadata under which [`convert`](crate::convert()) stores the
/// attributes of the source (HDF5 user attributes): the JSON text of
/// `{"node path": {"attribute name": value}}`, values as JSON numbers, booleans, strings
/// (bytes decoded as UTF-8, else latin-1), nested lists for arrays and objects for records;
/// NaN and infinities as `"nan"`, `"inf"`, `"-inf"`, complex numbers as `[re, im]`,
/// datetimes as integer ticks. pyarrow shows it in `pq.read_schema(path).metadata`.
pub const PARQUET_ATTRIBUTES_KEY: &str = "sciio.attributes";

/// How [`convert`](crate::convert()) writes. `Default` gives: format from the destination's extension, the
/// format's usual compression (npz: stored, like `np.savez`), member names from the source.
#[derive(Debug, Clone, Default)]
pub struct ConvertOptions {
    /// The output format; `None` takes it from the destination's extension.
    pub to: Option<Format>,
    /// Compression; `None` is the format's default.
    pub compress: Option<CompressSpec>,
    /// The node/member to write in the destination (`DST:NODE`): for `.npz` the member name of
    /// a single array, or a prefix for several; not allowed for `.npy`.
    pub dst_node: Option<String>,
    /// Refuse the conversion, before anything is written, when any source item would be
    /// left out ([`ConvertSummary::left_out`] would not be empty).
    pub strict: bool,
    /// The MAT version written to a `.mat` destination (`--mat-version`); default v7.3.
    pub mat_version: MatOutVersion,
    /// How a data frame goes into an `.h5` destination (a pandas HDFStore key).
    pub store: StoreOptions,
    /// A table or array converted to Parquet goes into the destination folder as
    /// `part-00000.parquet`, `part-00001.parquet`, ... of this many rows each (the last one
    /// shorter), one dataset for pyarrow.dataset, DuckDB or Spark (`--partition-rows`).
    pub partition_rows: Option<u64>,
}

/// How a data frame (Parquet) is written into an `.h5` file: as a key of a pandas HDFStore
/// (`pd.read_hdf(dst, key)` reads it), the key being `DST:NODE` or the source's file stem.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StoreOptions {
    /// `table` (the default: pandas' appendable, queryable format), `fixed`, or `pytables`
    /// (a plain PyTables Table of the index and columns, not a pandas key).
    pub format: Option<String>,
    /// Data columns of a `table` key: `all`, or labels separated by commas.
    pub data_columns: Option<String>,
    /// Append the rows to the existing `table` key (an existing key is replaced otherwise).
    pub append: bool,
    /// Write the frame's one column as a pandas Series key (`pd.read_hdf` returns a Series
    /// named by the column's label).
    pub series: bool,
}

impl StoreOptions {
    /// Refuses options that do not apply together: `--series`, `--data-columns` and
    /// `--append` describe a pandas key, which `--store-format pytables` (a plain PyTables
    /// Table) does not write; `--data-columns` belong to the `table` format and to a new key.
    pub fn check(&self) -> Result<()> {
        if self.format.as_deref() == Some("pytables") {
            let given: Vec<&str> = [
                (self.series, "--series"),
                (self.data_columns.is_some(), "--data-columns"),
                (self.append, "--append"),
            ]
            .into_iter()
            .filter_map(|(on, flag)| on.then_some(flag))
            .collect();
            if !given.is_empty() {
                return Err(Error::invalid_input(format!(
                    "{} describe(s) a pandas HDFStore key; --store-format pytables writes a plain \
                     PyTables Table (use --store-format table or fixed)",
                    given.join(" and ")
                )));
            }
        }
        if self.format.as_deref() == Some("fixed") && self.data_columns.is_some() {
            return Err(Error::invalid_input(
                "--data-columns belong to the table format (fixed keys have none)",
            ));
        }
        Ok(())
    }
}

/// The version of a MAT file [`convert`](crate::convert()) writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum MatOutVersion {
    /// v7.3 (HDF5; hdf5storage conventions): any size.
    #[default]
    V73,
    /// v7: Level 5 with each variable zlib-compressed (MATLAB's default `save` format);
    /// variables up to 2 GB.
    V7,
    /// v5: Level 5 uncompressed (what `scipy.io.savemat` writes); variables up to 2 GB.
    V5,
}

impl std::str::FromStr for MatOutVersion {
    type Err = Error;
    /// `7.3`, `7` or `5` (`v` prefix allowed; `6` is the same format as `5`).
    fn from_str(s: &str) -> Result<MatOutVersion> {
        match s.trim_start_matches(['v', 'V']) {
            "7.3" => Ok(MatOutVersion::V73),
            "7" => Ok(MatOutVersion::V7),
            "5" | "6" => Ok(MatOutVersion::V5),
            _ => Err(Error::invalid_input(format!(
                "unknown MAT version '{s}' (known: 7.3, 7, 5)"
            ))),
        }
    }
}

/// What [`convert`](crate::convert()) wrote, and what it left out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConvertSummary {
    /// The format written.
    pub format: Format,
    /// The names of the arrays written (npz members without `.npy`; `/` for an npy file).
    pub arrays: Vec<String>,
    /// Bytes of array data moved.
    pub data_bytes: u64,
    /// The source items the destination does not hold, each with its reason, in source order
    /// ([`crate::plan::summary_lines`] groups them for display).
    pub left_out: Vec<LeftOut>,
}

impl ConvertSummary {
    /// The left-out items grouped into short lines ([`crate::plan::summary_lines`]); empty
    /// when everything was carried.
    pub fn left_out_lines(&self) -> Vec<String> {
        crate::plan::summary_lines(&self.left_out)
    }
}

/// The zip compression of npz members for `--compress` (`deflate[:LEVEL]`; stored by default).
pub(crate) fn npz_compression(spec: Option<&CompressSpec>) -> Result<Compression> {
    let Some(spec) = spec else {
        return Ok(Compression::Stored);
    };
    Ok(match spec.only_one("npz", &["deflate"], 0..=9)? {
        None => Compression::Stored,
        Some(f) => Compression::Deflate(f.level.map_or(6, |l| l.unsigned_abs())),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn npz_compression_follows_the_spec() {
        assert_eq!(npz_compression(None).unwrap(), Compression::Stored);
        let spec = CompressSpec::parse("deflate").unwrap();
        assert_eq!(
            npz_compression(Some(&spec)).unwrap(),
            Compression::Deflate(6)
        );
        let spec = CompressSpec::parse("none").unwrap();
        assert_eq!(npz_compression(Some(&spec)).unwrap(), Compression::Stored);
        let spec = CompressSpec::parse("zstd:3").unwrap();
        assert!(npz_compression(Some(&spec)).is_err());
    }

    #[test]
    fn store_options_that_do_not_apply_together_are_refused() {
        let pytables = |f: fn(&mut StoreOptions)| {
            let mut o = StoreOptions {
                format: Some("pytables".into()),
                ..Default::default()
            };
            f(&mut o);
            o.check()
        };
        assert!(pytables(|_| {}).is_ok());
        let err = pytables(|o| o.series = true).unwrap_err();
        assert!(err.message().contains("--series"), "{err}");
        assert!(err.message().contains("--store-format pytables"), "{err}");
        let err = pytables(|o| o.data_columns = Some("a".into())).unwrap_err();
        assert!(err.message().contains("--data-columns"), "{err}");
        let err = pytables(|o| {
            o.series = true;
            o.data_columns = Some("all".into());
        })
        .unwrap_err();
        assert!(
            err.message().contains("--series and --data-columns"),
            "{err}"
        );
        let fixed = StoreOptions {
            format: Some("fixed".into()),
            data_columns: Some("a".into()),
            ..Default::default()
        };
        assert!(fixed.check().is_err());
        let table = StoreOptions {
            series: true,
            data_columns: Some("a".into()),
            ..Default::default()
        };
        assert!(table.check().is_ok());
    }
}
