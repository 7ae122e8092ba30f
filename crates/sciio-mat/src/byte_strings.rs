//! `numpy.bytes_` values that hdf5storage keeps as fixed-length byte strings in v7.3 files.
//!
//! hdf5storage (`matlab_compatible`, what `hdf5storage.savemat` does) stores a bytes array as
//! MATLAB char codes (`uint16`) only when every byte is ASCII; otherwise it keeps numpy's own
//! `|S<n>` strings in a dataset of class `char`, so no byte is re-encoded. Read, each string
//! spreads along MATLAB's last axis as its codes would (a `(2,)` array of `|S3` is a 1×6 char);
//! written, a char array sciio knows to be bytes holding a non-ASCII byte goes back to strings.

use sciio_core::{Error, Result};

use crate::value::CharArray;

/// The char array of `data`, fixed-length strings of `width` bytes each laid out over the
/// MATLAB dimensions `dims` (HDF5's reversed: the first varies fastest).
pub(crate) fn chars_of_strings(dims: &[usize], width: usize, data: &[u8]) -> Result<CharArray> {
    let Some((&columns, rest)) = dims.split_last() else {
        return Err(Error::format("byte strings without dimensions"));
    };
    let rows: usize = rest.iter().product();
    let expected = rows
        .checked_mul(columns)
        .and_then(|n| n.checked_mul(width))
        .filter(|&n| n == data.len())
        .ok_or_else(|| {
            Error::format(format!(
                "{} bytes of strings for dimensions {dims:?} of {width}-byte strings",
                data.len()
            ))
        })?;
    let mut codes = vec![0u32; expected];
    for column in 0..columns {
        for row in 0..rows {
            let string = (column * rows + row) * width;
            for (k, &byte) in data[string..string + width].iter().enumerate() {
                codes[(column * width + k) * rows + row] = u32::from(byte);
            }
        }
    }
    let mut shape = dims.to_vec();
    if let Some(last) = shape.last_mut() {
        *last = columns * width;
    }
    Ok(CharArray {
        shape,
        codes,
        numpy: None,
    })
}

/// The fixed-length strings of `width` bytes that [`chars_of_strings`] reads as `chars`, and
/// their HDF5 dimensions; `None` when `chars` is not such an array (a code beyond a byte, or
/// a last dimension that is not a whole number of strings).
pub(crate) fn strings_of_chars(chars: &CharArray, width: usize) -> Option<(Vec<u64>, Vec<u8>)> {
    let (&last, rest) = chars.shape.split_last()?;
    if width == 0 || !last.is_multiple_of(width) {
        return None;
    }
    let (columns, rows) = (last / width, rest.iter().product::<usize>());
    if rows.checked_mul(last)? != chars.codes.len() {
        return None;
    }
    let mut data = vec![0u8; chars.codes.len()];
    for column in 0..columns {
        for row in 0..rows {
            let string = (column * rows + row) * width;
            for k in 0..width {
                let code = chars.codes[(column * width + k) * rows + row];
                data[string + k] = u8::try_from(code).ok()?;
            }
        }
    }
    let mut dims: Vec<u64> = rest.iter().map(|&d| d as u64).collect();
    dims.push(columns as u64);
    dims.reverse();
    Some((dims, data))
}

/// The string width a `Python.numpy.UnderlyingType` of `bytes<bits>` gives.
pub(crate) fn bytes_width(underlying: &str) -> Option<usize> {
    let bits: usize = underlying.strip_prefix("bytes")?.parse().ok()?;
    (bits > 0 && bits.is_multiple_of(8)).then_some(bits / 8)
}

/// Whether hdf5storage would keep these codes as strings: some byte is not ASCII.
pub(crate) fn needs_strings(chars: &CharArray) -> bool {
    chars.codes.iter().any(|&c| c >= 128)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strings_spread_along_the_last_axis_and_come_back() {
        // numpy [[b'ab', b'c\xff'], [b'de', b'fg']]: MATLAB 2-by-2 of 2-byte strings, stored
        // column-major (HDF5 dims reversed): ab, de, c\xff, fg.
        let data = b"abdec\xfffg";
        let chars = chars_of_strings(&[2, 2], 2, data).unwrap();
        assert_eq!(chars.shape, vec![2, 4]);
        let row = |r: usize| -> Vec<u32> { (0..4).map(|c| chars.codes[c * 2 + r]).collect() };
        assert_eq!(row(0), b"abc\xff".map(u32::from).to_vec());
        assert_eq!(row(1), b"defg".map(u32::from).to_vec());
        let (dims, back) = strings_of_chars(&chars, 2).unwrap();
        assert_eq!((dims, back.as_slice()), (vec![2, 2], &data[..]));
    }

    #[test]
    fn sizes_that_disagree_are_errors_not_panics() {
        assert!(chars_of_strings(&[1, 2], 3, b"abc").is_err());
        assert!(chars_of_strings(&[], 3, b"abc").is_err());
        let chars = CharArray {
            shape: vec![1, 3],
            codes: vec![97, 300, 98],
            numpy: None,
        };
        assert!(strings_of_chars(&chars, 3).is_none());
        assert!(strings_of_chars(&chars, 2).is_none());
        assert_eq!(bytes_width("bytes24"), Some(3));
        assert_eq!(bytes_width("str24"), None);
    }
}
