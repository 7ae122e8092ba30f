//! Arbitrary bytes as an NPY header: parsing must return a header or an error, never panic;
//! a parsed dtype must print back to a descr that parses to the same dtype.
#![no_main]

use libfuzzer_sys::fuzz_target;
use sciio_core::{DType, PyLiteral};

fuzz_target!(|data: &[u8]| {
    if let Ok(header) = sciio_npy::parse_header(data) {
        let _ = header.data_len();
        if let Ok(descr) = header.dtype.descr_literal() {
            let text = descr.repr();
            let again = PyLiteral::parse(&text).expect("printed descr parses");
            assert_eq!(
                DType::parse_descr(&again).expect("printed descr is valid"),
                header.dtype
            );
            if header.shape.len() < 8 {
                let _ = sciio_npy::header_bytes(&header.dtype, &header.shape, header.fortran_order);
            }
        }
    }
    // The literal parser alone, on text.
    if let Ok(text) = std::str::from_utf8(data) {
        if let Ok(lit) = PyLiteral::parse(text) {
            let printed = lit.repr();
            assert_eq!(PyLiteral::parse(&printed).expect("repr parses"), lit);
            let _ = DType::parse_descr(&lit);
        }
    }
});
