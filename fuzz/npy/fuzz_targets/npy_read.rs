//! Arbitrary bytes as an .npy file: reading (sized and streamed) must return an array or an
//! error, never panic or allocate beyond the limits; what is read must write back and re-read
//! unchanged.
#![no_main]

use libfuzzer_sys::fuzz_target;
use sciio_core::Limits;

fuzz_target!(|data: &[u8]| {
    let limits = Limits::default().max_alloc(64 << 20);
    let sized = sciio_npy::read_array_sized(data, &limits, data.len() as u64);
    let streamed = sciio_npy::read_array(data, &limits);
    assert_eq!(sized.is_ok(), streamed.is_ok());
    let Ok(array) = sized else {
        return;
    };
    for i in 0..array.len().min(64) {
        let _ = array.get_flat(i);
    }
    let native = array.to_native();
    let _ = native.to_order(sciio_core::Order::C);
    let mut out = Vec::new();
    if sciio_npy::write_array(&mut out, &array).is_ok() {
        let back = sciio_npy::read_array(&out[..], &limits).expect("sciio reads what it writes");
        assert_eq!(back.as_bytes(), array.as_bytes());
        assert_eq!(back.dtype(), array.dtype());
    }
});
