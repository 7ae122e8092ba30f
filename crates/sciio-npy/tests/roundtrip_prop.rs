//! Property tests: random dtypes (nested records with padding, titles and subarray fields),
//! shapes and orders round-trip through write and read unchanged.

use proptest::prelude::*;
use sciio_core::{
    ByteOrder, DType, Field, Limits, NdArray, Order, PyLiteral, RecordType, ScalarKind, ScalarType,
    TimeBase, TimeUnit,
};

fn order() -> impl Strategy<Value = ByteOrder> {
    prop_oneof![Just(ByteOrder::Little), Just(ByteOrder::Big)]
}

fn time_unit() -> impl Strategy<Value = TimeUnit> {
    (0..TimeBase::ALL.len(), prop_oneof![Just(1u32), 2u32..100]).prop_map(|(i, m)| {
        let base = TimeBase::ALL[i];
        TimeUnit {
            base,
            multiple: if base == TimeBase::Generic { 1 } else { m },
        }
    })
}

fn scalar() -> impl Strategy<Value = DType> {
    let kind = prop_oneof![
        Just(ScalarKind::Bool),
        prop::sample::select(vec![1u8, 2, 4, 8]).prop_map(ScalarKind::Int),
        prop::sample::select(vec![1u8, 2, 4, 8]).prop_map(ScalarKind::UInt),
        prop::sample::select(vec![2u8, 4, 8, 12, 16]).prop_map(ScalarKind::Float),
        prop::sample::select(vec![8u8, 16, 24, 32]).prop_map(ScalarKind::Complex),
        (0usize..6).prop_map(ScalarKind::Bytes),
        (0usize..4).prop_map(ScalarKind::Unicode),
        (0usize..5).prop_map(ScalarKind::Void),
        time_unit().prop_map(ScalarKind::DateTime),
        time_unit().prop_map(ScalarKind::TimeDelta),
    ];
    (kind, order()).prop_map(|(k, o)| DType::Scalar(ScalarType::new(k, o)))
}

fn dtype() -> impl Strategy<Value = DType> {
    scalar().prop_recursive(3, 16, 4, |inner| {
        let field = (
            inner.clone(),
            0usize..4,
            any::<bool>(),
            prop::option::of(prop::collection::vec(1usize..4, 1..3)),
        );
        prop_oneof![
            (prop::collection::vec(field, 1..5), 0usize..5).prop_map(|(fields, tail)| {
                let mut offset = 0;
                let fields: Vec<Field> = fields
                    .into_iter()
                    .enumerate()
                    .map(|(i, (dt, pad, titled, sub))| {
                        offset += pad;
                        let dt = match sub {
                            Some(shape) => DType::SubArray(Box::new(dt), shape),
                            None => dt,
                        };
                        let f = Field {
                            name: format!("f{i}'\u{e9}"),
                            title: titled.then(|| format!("title \"{i}\"")),
                            offset,
                            dtype: dt,
                        };
                        offset += f.dtype.itemsize();
                        f
                    })
                    .collect();
                DType::Record(RecordType {
                    fields,
                    itemsize: offset + tail,
                })
            }),
            inner,
        ]
    })
}

fn shape() -> impl Strategy<Value = Vec<usize>> {
    prop::collection::vec(0usize..4, 0..4)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn write_then_read_is_identity(dt in dtype(), shape in shape(), fortran in any::<bool>(), seed in any::<u64>()) {
        prop_assume!(dt.itemsize() * shape.iter().product::<usize>() < 1 << 16);
        let descr = dt.descr_literal().unwrap();
        prop_assert_eq!(&DType::parse_descr(&PyLiteral::parse(&descr.repr()).unwrap()).unwrap(), &dt);

        let order = if fortran { Order::F } else { Order::C };
        let mut a = NdArray::zeroed(dt.clone(), &shape, order).unwrap();
        let mut x = seed;
        for b in a.as_bytes_mut().unwrap() {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            *b = (x >> 56) as u8;
        }
        let mut file = Vec::new();
        sciio_npy::write_array(&mut file, &a).unwrap();
        prop_assert_eq!(file.len() % 64, a.nbytes() % 64);
        let header = sciio_npy::parse_header(&file).unwrap();
        prop_assert_eq!(header.header_len % 64, 0);
        let back = sciio_npy::read_array_sized(&file[..], &Limits::default(), file.len() as u64).unwrap();
        prop_assert_eq!(back.dtype(), &dt);
        prop_assert_eq!(back.shape(), &shape[..]);
        prop_assert_eq!(back.as_bytes(), a.as_bytes());
        // Same logical array: compare in one order (numpy stores 1-d-like arrays as C).
        let (back_c, a_c) = (back.to_order(Order::C), a.to_order(Order::C));
        prop_assert_eq!(back_c.as_bytes(), a_c.as_bytes());
        // Byte-swapping twice is the identity; native order is native.
        let native = a.to_native();
        prop_assert!(native.dtype().is_native());
        let swapped_back = {
            let mut bytes = native.as_bytes().to_vec();
            if !dt.is_native() {
                sciio_core::byteswap_in_place(&dt, &mut bytes);
            }
            bytes
        };
        prop_assert_eq!(&swapped_back[..], a.as_bytes());
    }

    #[test]
    fn header_parser_never_panics(text in "\\PC{0,200}") {
        let mut bytes = b"\x93NUMPY\x01\x00".to_vec();
        bytes.extend_from_slice(&(text.len() as u16).to_le_bytes());
        bytes.extend_from_slice(text.as_bytes());
        let _ = sciio_npy::parse_header(&bytes);
    }
}
