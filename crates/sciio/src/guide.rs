//! The ten commonest tasks, each a short program (these are doc tests: they run with
//! `cargo test`). Lines starting with `#` in the source only set up the input files.
//!
//! # 1. A `.npy` into an `ndarray::ArrayD<f64>`
//!
//! ```
//! # let dir = tempfile::tempdir()?;
//! # let path = dir.path().join("x.npy");
//! # sciio::npy::write(&path, &sciio::core::ndarray::arr2(&[[1.0f64, 2.0], [3.0, 4.0]]))?;
//! let x: sciio::core::ndarray::ArrayD<f64> = sciio::npy::read(&path)?;
//! assert_eq!(x.shape(), &[2, 2]);
//! // Any format, any dtype: the neutral File, then a typed view.
//! let any = sciio::open(&path)?.read_array("/")?;
//! assert_eq!(any.to_ndarray::<f64>()?, x);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # 2. The members of an `.npz`
//!
//! ```
//! # let dir = tempfile::tempdir()?;
//! # let path = dir.path().join("run.npz");
//! # let mut w = sciio::npy::npz::NpzWriter::create(&path)?;
//! # w.add("t", &sciio::NdArray::from_vec(vec![0.0f64, 0.5], &[2])?)?;
//! # w.add("n", &sciio::NdArray::from_vec(vec![7i64], &[1])?)?;
//! # w.finish()?;
//! let mut npz = sciio::npy::npz::NpzReader::open(&path)?;
//! for name in npz.names().iter().map(|n| n.to_string()).collect::<Vec<_>>() {
//!     let member = npz.read(&name)?;
//!     println!("{name}: {} {:?}", member.dtype(), member.shape());
//! }
//! assert_eq!(npz.read("n")?.view::<i64>()?[[0]], 7);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # 3. A PyTables table as Arrow `RecordBatch`es (streamed)
//!
//! ```
//! # let dir = tempfile::tempdir()?;
//! # let path = dir.path().join("run.h5");
//! # let ids = sciio::pandas::arrow_array::Int32Array::from_iter_values(0..10_000);
//! # let frame = sciio::pandas::Frame::builder().column("id", std::sync::Arc::new(ids)).build()?;
//! # sciio::frames::write_pytables_table(&frame, &path, "/events", Some("zlib:1"))?;
//! let mut file = sciio::open(&path)?;
//! let batches = file.batches("/events", 4096)?;
//! println!("{:?}", batches.schema().arrow_schema());
//! let mut rows = 0;
//! for batch in batches {
//!     rows += batch?.num_rows(); // at most 4096 rows in memory at a time
//! }
//! assert_eq!(rows, 10_000);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # 4. Writing a PyTables table from `RecordBatch`es
//!
//! ```
//! use std::sync::Arc;
//! use sciio::pandas::arrow_array::{Float64Array, RecordBatch};
//! use sciio::pandas::Frame;
//! # let dir = tempfile::tempdir()?;
//! let x = Arc::new(Float64Array::from(vec![0.1, 0.2, 0.3]));
//! let batch = RecordBatch::try_from_iter([("x", x as _)])?;
//! let frame = Frame::builder().column("x", batch.column(0).clone()).build()?;
//! let path = dir.path().join("out.h5");
//! sciio::frames::write_pytables_table(&frame, &path, "/readings", Some("blosc2:zstd:5"))?;
//! // PyTables reads it as `f.root.readings.read()`: a Table with a float64 column `x`.
//! assert_eq!(sciio::open(&path)?.read_array("/readings")?.len(), 3);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # 5. A field of a MATLAB struct
//!
//! ```
//! use sciio::matlab::{MatValue, MatWriter, StructArray, WriteOptions};
//! # let dir = tempfile::tempdir()?;
//! # let path = dir.path().join("s.mat");
//! # let s = StructArray::scalar(vec![("x".into(), MatValue::from(vec![1.0, 2.0, 3.0]))]);
//! # let mut w = MatWriter::create(&path, WriteOptions::default())?;
//! # w.write("s", &MatValue::Struct(s))?;
//! # w.finish()?;
//! // As numpy sees it (hdf5storage.loadmat's view):
//! let x = sciio::open(&path)?.read_array("/s/x")?;
//! assert_eq!(x.to_ndarray::<f64>()?.iter().sum::<f64>(), 6.0);
//! // As MATLAB sees it: classes, column-major dimensions, cells and structs.
//! let s = sciio::matlab::MatFile::open(&path)?.read("s")?;
//! assert!(matches!(s, MatValue::Struct(_)));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # 6. Writing a MATLAB struct (v7.3, or v7/v5 with `sciio convert --mat-version`)
//!
//! ```
//! use sciio::matlab::{CellArray, MatValue, MatWriter, StructArray, WriteOptions};
//! # let dir = tempfile::tempdir()?;
//! let run = StructArray::scalar(vec![
//!     ("gain".into(), MatValue::from(vec![1.5, 2.5])),
//!     ("label".into(), MatValue::from("probe A")),
//!     ("tags".into(), MatValue::Cell(CellArray::row(vec![MatValue::from(true)]))),
//! ]);
//! let path = dir.path().join("run.mat");
//! let mut writer = MatWriter::create(&path, WriteOptions::default())?;
//! writer.write("run", &MatValue::Struct(run))?;
//! writer.finish()?; // MATLAB: load('run.mat'); run.gain
//! # assert!(sciio::open(&path)?.node("/run/gain").is_ok());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # 7. Parquet with pandas metadata (an index pandas restores)
//!
//! ```
//! use std::sync::Arc;
//! use sciio::pandas::arrow_array::{Float64Array, StringArray};
//! use sciio::pandas::{write_frame, Frame, ParquetOptions};
//! # let dir = tempfile::tempdir()?;
//! let frame = Frame::builder()
//!     .index_level(Some("probe"), Arc::new(StringArray::from(vec!["a", "b"])))
//!     .column("volts", Arc::new(Float64Array::from(vec![0.5, 0.7])))
//!     .build()?;
//! let path = dir.path().join("v.parquet");
//! write_frame(&path, &frame, &ParquetOptions::new())?; // pd.read_parquet: index "probe"
//! let back = sciio::open(&path)?.batches("/", 0)?.into_frame()?;
//! assert_eq!(back.schema().index().len(), 1);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # 8. A pandas HDFStore key (`df.to_hdf`) as a frame, and one written
//!
//! ```
//! use std::sync::Arc;
//! use sciio::pandas::{arrow_array::Float64Array, Frame};
//! # let dir = tempfile::tempdir()?;
//! let path = dir.path().join("store.h5");
//! let frame = Frame::builder().column("x", Arc::new(Float64Array::from(vec![1.0, 2.5]))).build()?;
//! // pd.read_hdf(path, "df") returns this frame (a `table` key, pandas' appendable format).
//! sciio::hdfstore::write(&path, "/df", &frame, &Default::default())?;
//! let mut file = sciio::open(&path)?;
//! let back = file.batches("/df", 0)?.into_frame()?; // what pd.read_hdf returns
//! println!("{}", back.to_text(10)?);
//! assert_eq!(back.num_rows(), 2);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # 9. Memory-mapping a `.npy`
//!
//! ```
//! # let dir = tempfile::tempdir()?;
//! # let path = dir.path().join("big.npy");
//! # sciio::npy::write(&path, &sciio::core::ndarray::Array1::<f32>::zeros(1 << 16))?;
//! // The data stays in the file; pages load on access. `unsafe`: nothing may change or
//! // truncate the file while the map lives (memmap2's contract; see `open_mmap`).
//! // SAFETY: this program is the only one using the file.
//! let mapped = unsafe { sciio::npy::open_mmap(&path)? };
//! assert!(mapped.is_mapped());
//! let view = mapped.view::<f32>()?;
//! assert_eq!(view.len(), 1 << 16);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # 10. A big table into Parquet in bounded memory
//!
//! ```
//! use sciio::pandas::{ParquetOptions, ParquetWriter};
//! # let dir = tempfile::tempdir()?;
//! # let src = dir.path().join("big.h5");
//! # let ids = sciio::pandas::arrow_array::Int64Array::from_iter_values(0..100_000);
//! # let frame = sciio::pandas::Frame::builder().column("id", std::sync::Arc::new(ids)).build()?;
//! # sciio::frames::write_pytables_table(&frame, &src, "/t", None)?;
//! let mut file = sciio::open(&src)?;
//! let batches = file.batches("/t", 16_384)?;
//! let dst = dir.path().join("big.parquet");
//! let mut writer = ParquetWriter::create(&dst, batches.schema(), &ParquetOptions::new())?;
//! for batch in batches {
//!     writer.write(&batch?)?;
//! }
//! writer.finish()?;
//! # assert_eq!(sciio::open(&dst)?.batches("/", 0)?.into_frame()?.num_rows(), 100_000);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! The same conversions, with the plan of what each destination holds, are one call:
//! [`crate::convert`] (`sciio convert` on the command line).
