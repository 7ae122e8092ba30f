//! `sciio`: list, print and convert numpy, PyTables, MATLAB and pandas files.
//!
//! Argument parsing and printing only; everything else is the `sciio` library. Errors are one
//! line on stderr (`sciio: error: ...`) with exit status 1 (2 for usage errors); a panic, which
//! would be a bug, also prints one line. A conversion that ran exits 0 and lists what it left
//! out on stderr, one line per group (`sciio: left out: ...`).
// Input never reaches a panic: errors are returned (tests may unwrap).
#![cfg_attr(
    not(test),
    deny(
        clippy::unwrap_used,
        clippy::expect_used,
        clippy::panic,
        clippy::unreachable
    )
)]

mod alloc;
mod draw;
mod info;
mod json;
mod listing;
mod numfmt;
mod progress;
mod rows;
mod sparse;

use std::io::Write;
use std::process::ExitCode;

use clap::{CommandFactory, FromArgMatches, Parser, Subcommand};
use sciio::{CompressSpec, ConvertOptions, Error, File, Format, MatOutVersion, Result, Target};

/// Read, list, inspect and convert the files of scientific Python and MATLAB: numpy .npy and
/// .npz, PyTables/HDF5 .h5 (pandas HDFStore too), MATLAB .mat (v4 to v7.3), pandas .parquet.
///
/// FILE:NODE names a node (an HDF5 path like /group/x or an npz member like x) inside FILE;
/// the last ':' separates them when FILE exists, NODE starts with '/' or NODE is a plain member
/// name. End an argument with ':' to take it as a whole file name (odd:name.npy:).
#[derive(Debug, Parser)]
#[command(name = "sciio", version, max_term_width = 100)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Show the tree of nodes (npz: members) with dtype, shape, order and size.
    Ls {
        /// FILE, or FILE:NODE to list one node and what is below it.
        file: String,
        /// Also list every node's attributes (with --ptdump: system and user ones, like
        /// `ptdump -a`).
        #[arg(short = 'a', long = "attrs")]
        attrs: bool,
        /// List an HDF5 file as PyTables' ptdump does instead (class, shape, filters, title).
        #[arg(long, conflicts_with = "json")]
        ptdump: bool,
        /// Print one JSON document (path, kind, dtype, shape, order, bytes, attributes of
        /// every node) instead.
        #[arg(long)]
        json: bool,
    },
    /// Show how a file or node is stored: attributes; per array its layout, chunks, filters,
    /// bytes on disk and compression ratio (HDF5, npz members); Parquet row groups with column
    /// codecs, encodings, sizes and statistics.
    Info {
        /// FILE or FILE:NODE.
        target: String,
    },
    /// Print the values of an array like numpy does (`print(array)`), or as JSON.
    Cat {
        /// FILE or FILE:NODE (NODE may be left out when FILE holds one array).
        target: String,
        /// Print a JSON document (dtype descr, shape, order, values) instead; a data frame
        /// (Parquet, HDFStore key) as pandas' `to_json(orient="split")` with dtypes.
        #[arg(long)]
        json: bool,
        /// Print only the first N rows (along the first axis); only they are read.
        #[arg(long, value_name = "N", conflicts_with = "slice")]
        head: Option<u64>,
        /// Print rows START:STOP (a Python slice: either side optional, negatives count from
        /// the end, e.g. -5:); only they are read.
        #[arg(long, value_name = "START:STOP", allow_hyphen_values = true)]
        slice: Option<rows::RowSlice>,
        /// A sparse matrix (MATLAB sparse, scipy.sparse.save_npz) as a dense array instead of
        /// MATLAB's `(row,col) value` list.
        #[arg(long)]
        dense: bool,
    },
    /// Convert a file or one node into another format (by DST's extension, or --to); several
    /// sources combine into one container (many .npy into one .npz). What DST cannot hold
    /// (attributes in .npy/.npz/.mat, links...) is left out and listed on stderr.
    Convert {
        /// SRC or SRC:NODE (one or more), then DST or DST:NODE (DST's NODE is the member name
        /// for .npz).
        #[arg(required = true, num_args = 2.., value_name = "PATH")]
        paths: Vec<String>,
        /// Output format, overriding DST's extension: npy, npz, hdf5, mat, parquet.
        #[arg(long, value_name = "FORMAT")]
        to: Option<Format>,
        /// Compression, one syntax for every format: NAME[:CODEC][:LEVEL][,...], e.g.
        /// deflate:6 (npz), shuffle,zlib:1 or blosc2:lz4:5 (hdf5), zstd:3 (parquet), none.
        #[arg(long, value_name = "SPEC")]
        compress: Option<CompressSpec>,
        /// Fail, writing nothing, when anything of the source would be left out (by default
        /// what DST cannot hold is left out and listed on stderr).
        #[arg(long)]
        strict: bool,
        /// MAT version of a .mat output: 7.3 (HDF5, the default), 7 (MATLAB's default `save`
        /// format: compressed variables up to 2 GB) or 5 (uncompressed, as scipy.io.savemat).
        #[arg(long, value_name = "VERSION")]
        mat_version: Option<MatOutVersion>,
        /// A data frame into .h5 becomes a pandas HDFStore key (DST:KEY, else the source's
        /// name) in this format: table (the default), fixed, or pytables (a plain Table).
        #[arg(long, value_name = "FORMAT")]
        store_format: Option<String>,
        /// Data columns of a table key: labels separated by commas, or `all`.
        #[arg(long, value_name = "COLUMNS")]
        data_columns: Option<String>,
        /// Append the frame's rows to the existing table key (same columns and types).
        #[arg(long)]
        append: bool,
        /// Write a one-column frame as a pandas Series key (named by the column's label).
        #[arg(long)]
        series: bool,
        /// Write a table or array into the folder DST as Parquet files of N rows each
        /// (part-00000.parquet, ...): one dataset for pyarrow.dataset, DuckDB, Spark.
        #[arg(long, value_name = "N")]
        partition_rows: Option<u64>,
    },
    /// Run an SQL query (DataFusion's dialect) over files; a table is a file named as for the
    /// other commands, in single quotes: FROM 'run.h5:/t' (PyTables table or array), 'x.npy',
    /// 'a.npz:member', 'store.h5:/df' (a pandas key, as df.reset_index()), 'f.parquet'.
    /// Prints the result as a table.
    #[cfg(feature = "sql")]
    Sql {
        /// The query, e.g. "SELECT id, max(x) FROM 'run.h5:/t' WHERE x > 0 GROUP BY id".
        query: String,
        /// Write the result to this Parquet file (pandas reads it) instead of printing it.
        #[arg(long, value_name = "FILE")]
        out: Option<std::path::PathBuf>,
        /// Name a table for the query: NAME=FILE[:NODE] (repeat for more), then FROM NAME.
        #[arg(long = "table", value_name = "NAME=FILE[:NODE]")]
        tables: Vec<String>,
    },
}

/// Environment variable that makes `sciio` panic at start-up, to test the panic hook.
const PANIC_FOR_TEST: &str = "SCIIO_PANIC_FOR_TEST";

/// The panic the hook's test asks for (only when `SCIIO_PANIC_FOR_TEST` is set).
#[allow(clippy::panic, reason = "the test of the panic hook needs one")]
fn deliberate_panic() {
    panic!("{PANIC_FOR_TEST} is set\n(a deliberate panic)"); // ok: only when the variable asks
}

fn main() -> ExitCode {
    alloc::keep_freed_buffers();
    std::panic::set_hook(Box::new(|info| {
        // A reader turns this panic into an error naming the damaged part of the file.
        if sciio::core::contain::panic_is_contained() {
            return;
        }
        let what = info
            .payload()
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| info.payload().downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "panic".to_string());
        let place = info
            .location()
            .map(|l| format!(" at {}:{}", l.file(), l.line()))
            .unwrap_or_default();
        eprintln!(
            "sciio: internal error (a bug, please report it): {}{place}",
            one_line(&what)
        );
    }));
    // A hidden switch for the test of the hook above (tests/cli.rs): a two-line message proves
    // the hook prints one line whatever the payload.
    if std::env::var_os(PANIC_FOR_TEST).is_some() {
        deliberate_panic();
    }
    sciio::remove_temporaries_on_signals();
    let cli = match Cli::command()
        .version(version_text())
        .try_get_matches()
        .and_then(|m| Cli::from_arg_matches(&m))
    {
        Ok(cli) => cli,
        Err(e) => return usage_error(e),
    };
    match run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) if is_broken_pipe(&e) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("sciio: error: {}", one_line(&e.to_string()));
            ExitCode::from(1)
        }
    }
}

/// `sciio --version`: the crate's version and the versions of the C libraries linked in
/// (`0.1.0 (libhdf5 2.0.0)`).
fn version_text() -> String {
    let libs = sciio::linked_libraries();
    if libs.is_empty() {
        env!("CARGO_PKG_VERSION").to_string()
    } else {
        format!("{} ({})", env!("CARGO_PKG_VERSION"), libs.join(", "))
    }
}

/// clap's help and version go to stdout as usual; real usage errors become one line.
fn usage_error(e: clap::Error) -> ExitCode {
    use clap::error::ErrorKind;
    if matches!(e.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion) {
        return match e.print() {
            Ok(()) => ExitCode::SUCCESS,
            Err(_) => ExitCode::from(1),
        };
    }
    if e.kind() == ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand {
        eprintln!(
            "sciio: error: missing command (ls, info, cat, convert, sql); try 'sciio --help'"
        );
        return ExitCode::from(2);
    }
    let text = e.render().to_string();
    let first = text
        .lines()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("invalid arguments");
    let first = first.trim().trim_start_matches("error:").trim();
    eprintln!("sciio: error: {first} (try 'sciio --help')");
    ExitCode::from(2)
}

/// The message on one line, with control characters (which may come from a damaged file's
/// bytes: escape sequences, NUL) escaped so they never reach the terminal.
fn one_line(s: &str) -> String {
    let joined = s.split_whitespace().collect::<Vec<_>>().join(" ");
    joined
        .chars()
        .flat_map(|c| -> Vec<char> {
            if c.is_control() {
                c.escape_unicode().collect()
            } else {
                vec![c]
            }
        })
        .collect()
}

fn is_broken_pipe(e: &Error) -> bool {
    use std::error::Error as _;
    e.source()
        .and_then(|s| s.downcast_ref::<std::io::Error>())
        .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
}

fn run(cli: Cli) -> Result<()> {
    match cli.command {
        Command::Ls {
            file,
            attrs,
            ptdump,
            json,
        } => print_out(&listing::ls(
            &Target::parse(&file),
            listing::LsOptions {
                attrs,
                ptdump,
                json,
            },
        )?),
        Command::Info { target } => print_out(&info::info(&Target::parse(&target))?),
        Command::Cat {
            target,
            json,
            head,
            slice,
            dense,
        } => cat(
            &Target::parse(&target),
            json,
            head.map(rows::RowSlice::head).or(slice),
            dense,
        ),
        Command::Convert {
            paths,
            to,
            compress,
            strict,
            mat_version,
            store_format,
            data_columns,
            append,
            series,
            partition_rows,
        } => {
            let (dst, srcs) = paths
                .split_last()
                .ok_or_else(|| Error::invalid_input("convert needs SRC and DST"))?;
            let srcs: Vec<Target> = srcs.iter().map(|s| Target::parse(s)).collect();
            // A partitioned output is a folder of Parquet files (named as any folder is).
            let to = match to {
                None if partition_rows.is_some()
                    && Format::for_output(&Target::parse(dst).file, None).is_err() =>
                {
                    Some(Format::Parquet)
                }
                to => to,
            };
            if mat_version.is_some()
                && Format::for_output(&Target::parse(dst).file, to)? != Format::Mat
            {
                return Err(Error::invalid_input(
                    "--mat-version applies to .mat outputs only",
                ));
            }
            let store = sciio::StoreOptions {
                format: store_format,
                data_columns,
                append,
                series,
            };
            if store != sciio::StoreOptions::default()
                && Format::for_output(&Target::parse(dst).file, to)? != Format::Hdf5
            {
                return Err(Error::invalid_input(
                    "--store-format, --data-columns, --append and --series apply to .h5 outputs only",
                ));
            }
            let options = ConvertOptions {
                to,
                compress,
                dst_node: None,
                strict,
                mat_version: mat_version.unwrap_or_default(),
                store,
                partition_rows,
            };
            convert(&srcs, &Target::parse(dst), options)
        }
        #[cfg(feature = "sql")]
        Command::Sql { query, out, tables } => sql(&query, out.as_deref(), &tables),
    }
}

/// `sciio sql`: the result printed as a table, or written to `out` as Parquet.
#[cfg(feature = "sql")]
fn sql(query: &str, out: Option<&std::path::Path>, tables: &[String]) -> Result<()> {
    let session = sciio_sql::SqlSession::new()?;
    for table in tables {
        let (name, target) = table.split_once('=').ok_or_else(|| {
            Error::invalid_input(format!("--table {table:?}: expected NAME=FILE[:NODE]"))
        })?;
        session.register(name, target)?;
    }
    match out {
        Some(out) => {
            let rows = session.query_to_parquet(query, out)?;
            let plural = if rows == 1 { "" } else { "s" };
            print_out(&format!("{}: wrote {rows} row{plural}\n", out.display()))
        }
        None => print_out(&sciio_sql::format_table(&session.query(query)?)?),
    }
}

/// Prints `text`, with control characters other than line breaks escaped: node names and
/// values come from files, and a name holding an escape sequence must not drive the terminal.
fn print_out(text: &str) -> Result<()> {
    let text: String = text
        .chars()
        .flat_map(|c| -> Vec<char> {
            if c.is_control() && c != '\n' {
                c.escape_unicode().collect()
            } else {
                vec![c]
            }
        })
        .collect();
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())
        .and_then(|()| out.flush())
        .map_err(|e| Error::io("cannot write to stdout", e))
}

fn cat(target: &Target, as_json: bool, rows: Option<rows::RowSlice>, dense: bool) -> Result<()> {
    let mut file = File::open(&target.file)?;
    let only_arrays = || Error::unsupported("--head and --slice select rows of arrays and tables");
    if as_json {
        if let Some(frame) = file.frame(target.node.as_deref())? {
            let (start, stop) =
                rows.map_or((0, u64::MAX), |sel| sel.resolve(frame.num_rows() as u64));
            let range = usize::try_from(start).unwrap_or(usize::MAX)
                ..usize::try_from(stop).unwrap_or(usize::MAX);
            let doc = frame
                .to_json(range)
                .map_err(|e| e.with_file(&target.file))?;
            let text =
                serde_json::to_string(&doc).map_err(|e| Error::invalid_input(e.to_string()))?;
            return print_out(&(text + "\n"));
        }
    }
    if let Some(text) = frame_text(&file, target)? {
        return rows.map_or_else(|| print_out(&text), |_| Err(only_arrays()));
    }
    let base = target.node.as_deref().unwrap_or("/");
    if !as_json && sparse::is_sparse(file.node(base)?) {
        return print_out(&sparse::sparse_text(&mut file, base, dense)?);
    }
    if let Some(node) = target.node.as_deref() {
        if let sciio::NodeKind::Opaque { kind, .. } = &file.node(node)?.kind {
            if kind == "VLArray" {
                rows.map_or(Ok(()), |_| Err(only_arrays()))?;
                return print_out(&vlarray_text(&mut file, node, as_json)?);
            }
        }
    }
    let path = file.single_array_path(target.node.as_deref())?;
    let array = match rows {
        Some(sel) => {
            let len = file
                .node(&path)?
                .array_info()
                .map_or(1, |i| i.shape.first().copied().unwrap_or(1));
            let (start, stop) = sel.resolve(len as u64);
            file.read_array_rows(&path, start, stop)?
        }
        None => file.read_array(&path)?,
    };
    let text = if as_json {
        let doc = json::array_document(&path, &array)?;
        serde_json::to_string(&doc).map_err(|e| Error::invalid_input(e.to_string()))? + "\n"
    } else {
        numfmt::array_str(&array)? + "\n"
    };
    print_out(&text)
}

/// A VLArray as PyTables' `print(node.read())` shows it: a list with one `array(...)` per
/// row of numbers, `b'...'` per `vlstring` row, `'...'` per `vlunicode` row. With `--json`:
/// `{"node": ..., "rows": [one array document per row]}`.
fn vlarray_text(file: &mut File, node: &str, as_json: bool) -> Result<String> {
    let rows = match file.read_rows(node) {
        Ok(rows) => rows,
        // h5py's datasets of variable-length strings read whole, as h5py prints them.
        Err(e) if e.kind() == sciio::ErrorKind::Mismatch => {
            let array = file.read_array(node)?;
            return Ok(if as_json {
                let doc = json::array_document(node, &array)?;
                serde_json::to_string(&doc).map_err(|e| Error::invalid_input(e.to_string()))? + "\n"
            } else {
                numfmt::array_str(&array)? + "\n"
            });
        }
        Err(e) => return Err(e),
    };
    if as_json {
        let docs = rows
            .iter()
            .map(|r| json::array_document(node, r))
            .collect::<Result<Vec<_>>>()?;
        let doc = serde_json::json!({ "node": node, "rows": docs });
        return Ok(
            serde_json::to_string(&doc).map_err(|e| Error::invalid_input(e.to_string()))? + "\n",
        );
    }
    Ok(numfmt::rows_repr(&rows)? + "\n")
}

/// Rows `sciio cat` prints of a data frame (the first and last half), like pandas' default.
const FRAME_ROWS: usize = 60;

/// A data frame printed like pandas' `print(df)`; `None` when the file holds no frame.
fn frame_text(file: &File, target: &Target) -> Result<Option<String>> {
    // A pandas HDFStore key (`store.h5:/df`) prints as the frame pd.read_hdf gives.
    if let Some(node) = target.node.as_deref() {
        if let Some(text) = file.key_frame_text(node, FRAME_ROWS)? {
            return Ok(Some(text));
        }
    }
    if !matches!(file.root().kind, sciio::NodeKind::Frame { .. }) {
        return Ok(None);
    }
    if let Some(node) = target
        .node
        .as_deref()
        .filter(|n| !n.trim_matches('/').is_empty())
    {
        return Err(Error::not_found(format!(
            "a Parquet file is one data frame without nodes; drop ':{node}'"
        ))
        .with_file(&target.file));
    }
    file.frame_text(FRAME_ROWS)
}

/// The rows a conversion's progress is shown in: those of its one source's table, frame or
/// array (`File::rows`), when the data goes row after row (not into or out of a MAT file,
/// whose matrices go column by column).
fn rows_of(files: &[File], srcs: &[Target], to: Option<sciio::Format>) -> Option<u64> {
    let ([file], [src]) = (files, srcs) else {
        return None;
    };
    let mat = sciio::Format::Mat;
    if to == Some(mat) || file.format() == mat {
        return None;
    }
    file.rows(src.node.as_deref())
}

/// Converts; what DST cannot hold is listed on stderr after the conversion, grouped
/// (`left out: 3 attributes on 2 nodes (npz holds no attributes)`).
fn convert(srcs: &[Target], dst: &Target, options: ConvertOptions) -> Result<()> {
    let mut files = srcs
        .iter()
        .map(|t| File::open(&t.file))
        .collect::<Result<Vec<File>>>()?;
    let to = options
        .to
        .or_else(|| sciio::Format::from_extension(&dst.file));
    let rows = rows_of(&files, srcs, to);
    let mut sources: Vec<(&mut File, Option<&str>)> = files
        .iter_mut()
        .zip(srcs)
        .map(|(f, t)| (f, t.node.as_deref()))
        .collect();
    let mut bar = progress::Progress::new(&dst.file.display().to_string(), rows);
    let options = ConvertOptions {
        dst_node: dst.node.clone(),
        ..options
    };
    let result = sciio::convert_many(&mut sources, &dst.file, &options, &mut |done, total| {
        bar.update(done, total)
    });
    bar.finish();
    let summary = result?;
    for line in summary.left_out_lines() {
        eprintln!("sciio: {line}");
    }
    // A Parquet file is one frame: what was written is columns, not arrays.
    let unit = if summary.format == sciio::Format::Parquet {
        "column"
    } else {
        "array"
    };
    print_out(&format!(
        "{}: wrote {} {unit}{} ({} of data) as {}\n",
        dst.file.display(),
        summary.arrays.len(),
        if summary.arrays.len() == 1 { "" } else { "s" },
        draw::human_bytes(summary.data_bytes),
        summary.format
    ))
}
