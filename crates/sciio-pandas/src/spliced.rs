//! Column chunks sciio encodes itself (categorical and dictionary-string chunks, fixed-size
//! lists): pages serialized one by one as they are made, and the chunk handed to the row group
//! writer as those pieces, so a chunk's bytes are never gathered into one buffer (the pages
//! and a copy of them would both be held while the chunk closes).

use std::collections::VecDeque;
use std::io::Read;

use bytes::{Buf, Bytes};
use parquet::basic::Encoding;
use parquet::column::page::{CompressedPage, PageWriteSpec, PageWriter};
use parquet::column::writer::ColumnCloseResult;
use parquet::file::reader::{ChunkReader, Length};
use parquet::file::writer::{SerializedPageWriter, TrackedWrite};

use sciio_core::Result;

use crate::parquet_error::parquet_err;

/// A column chunk encoded here, ready to be spliced into a row group.
pub(crate) struct EncodedChunk {
    pub(crate) bytes: ChunkBytes,
    pub(crate) close: ColumnCloseResult,
}

/// One page as it goes into the file: its header and (compressed) body.
pub(crate) struct SerializedPage {
    pub(crate) bytes: Bytes,
    /// Where the page went, as if it were a chunk's first page (offset 0).
    pub(crate) spec: PageWriteSpec,
    pub(crate) encoding: Encoding,
    /// The body's size compressed (the end of `bytes`) and uncompressed.
    pub(crate) body: usize,
    pub(crate) raw_body: usize,
}

impl SerializedPage {
    /// The page's compressed body.
    pub(crate) fn body(&self) -> Bytes {
        self.bytes
            .slice(self.bytes.len().saturating_sub(self.body)..)
    }
}

/// Serializes one page (Thrift header, then its body).
pub(crate) fn serialize_page(page: CompressedPage) -> Result<SerializedPage> {
    let encoding = page.encoding();
    let (body, raw_body) = (page.compressed_size(), page.uncompressed_size());
    // a page header without statistics is well under 256 bytes
    let mut sink = TrackedWrite::new(Vec::with_capacity(body + 256));
    let spec = {
        let mut writer = SerializedPageWriter::new(&mut sink);
        let spec = writer.write_page(page).map_err(parquet_err)?;
        writer.close().map_err(parquet_err)?;
        spec
    };
    let bytes = Bytes::from(sink.into_inner().map_err(parquet_err)?);
    Ok(SerializedPage {
        bytes,
        spec,
        encoding,
        body,
        raw_body,
    })
}

/// The pages serialized one after the other, with where each one went.
pub(crate) fn serialize_pages(
    pages: Vec<CompressedPage>,
) -> Result<(ChunkBytes, Vec<PageWriteSpec>)> {
    let pages = pages
        .into_iter()
        .map(serialize_page)
        .collect::<Result<Vec<_>>>()?;
    Ok(ChunkBytes::of_pages(pages))
}

/// A column chunk's bytes as the pieces they were made in, read in order.
#[derive(Default)]
pub(crate) struct ChunkBytes {
    parts: Vec<Bytes>,
    len: u64,
}

impl ChunkBytes {
    /// The pages one after the other, with each page's spec placed where it lands.
    pub(crate) fn of_pages(
        pages: impl IntoIterator<Item = SerializedPage>,
    ) -> (ChunkBytes, Vec<PageWriteSpec>) {
        let mut chunk = ChunkBytes::default();
        let mut specs = Vec::new();
        for page in pages {
            let mut spec = page.spec;
            spec.offset = chunk.len;
            specs.push(spec);
            chunk.push(page.bytes);
        }
        (chunk, specs)
    }

    fn push(&mut self, bytes: Bytes) {
        self.len += bytes.len() as u64;
        self.parts.push(bytes);
    }
}

impl From<Bytes> for ChunkBytes {
    fn from(bytes: Bytes) -> Self {
        let mut chunk = ChunkBytes::default();
        chunk.push(bytes);
        chunk
    }
}

impl Length for ChunkBytes {
    fn len(&self) -> u64 {
        self.len
    }
}

impl ChunkReader for ChunkBytes {
    type T = PartsReader;

    fn get_read(&self, start: u64) -> parquet::errors::Result<PartsReader> {
        let mut skip = start;
        let mut parts = VecDeque::new();
        for part in &self.parts {
            let len = part.len() as u64;
            if skip >= len {
                skip -= len;
                continue;
            }
            // skip < len, a usize
            parts.push_back(part.slice(skip as usize..));
            skip = 0;
        }
        Ok(PartsReader { parts })
    }

    fn get_bytes(&self, start: u64, length: usize) -> parquet::errors::Result<Bytes> {
        let available = self.len.saturating_sub(start);
        if length as u64 > available {
            return Err(parquet::errors::ParquetError::EOF(format!(
                "{length} bytes at {start} of a {}-byte chunk",
                self.len
            )));
        }
        let mut out = vec![0; length];
        self.get_read(start)?.read_exact(&mut out)?;
        Ok(Bytes::from(out))
    }
}

/// Reads [`ChunkBytes`] from an offset on.
pub(crate) struct PartsReader {
    parts: VecDeque<Bytes>,
}

impl Read for PartsReader {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        while let Some(front) = self.parts.front_mut() {
            if front.is_empty() {
                self.parts.pop_front();
                continue;
            }
            let n = front.len().min(buf.len());
            front.copy_to_slice(buf.get_mut(..n).unwrap_or_default());
            return Ok(n);
        }
        Ok(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_across_parts_from_any_offset() {
        let mut chunk = ChunkBytes::default();
        for part in [&b"abc"[..], b"", b"defg", b"h"] {
            chunk.push(Bytes::copy_from_slice(part));
        }
        assert_eq!(chunk.len(), 8);
        for start in 0..=8 {
            let mut got = Vec::new();
            chunk
                .get_read(start)
                .unwrap()
                .read_to_end(&mut got)
                .unwrap();
            assert_eq!(got, &b"abcdefgh"[start as usize..]);
            let n = 8 - start as usize;
            assert_eq!(
                chunk.get_bytes(start, n).unwrap(),
                &b"abcdefgh"[start as usize..]
            );
        }
        assert!(chunk.get_bytes(5, 4).is_err());
    }
}
