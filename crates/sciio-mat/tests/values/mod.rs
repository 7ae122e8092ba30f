//! The MATLAB values every writer test writes: every class, shape kind, empties, cells,
//! structs, struct arrays, sparse matrices, text beyond UTF-16.
#![allow(dead_code)]

use sciio_core::{DType, NdArray, Order, ScalarKind};
use sciio_mat::{CellArray, CharArray, MatValue, SparseMatrix, StructArray};

pub fn arr<T: sciio_core::Element>(v: Vec<T>, matlab_shape: &[usize]) -> NdArray {
    // Column-major data for a MATLAB shape: build C-order over the reversed shape, then view
    // as F-order with the MATLAB shape (the same bytes).
    let rev: Vec<usize> = matlab_shape.iter().rev().copied().collect();
    let c = NdArray::from_vec(v, &rev).unwrap();
    NdArray::from_bytes(c.dtype().clone(), matlab_shape, Order::F, c.as_bytes()).unwrap()
}

pub fn empty(kind: ScalarKind, shape: &[usize]) -> MatValue {
    MatValue::numeric(NdArray::zeroed(DType::scalar(kind), shape, Order::F).unwrap()).unwrap()
}

pub fn num(a: NdArray) -> MatValue {
    MatValue::numeric(a).unwrap()
}

pub fn values() -> Vec<(String, MatValue)> {
    let c64 = |re: f64, im: f64| sciio_core::num_complex::Complex::new(re, im);
    let mut v: Vec<(&str, MatValue)> = vec![
        ("d_scalar", MatValue::from(2.5)),
        ("d_row", MatValue::from(vec![1.0, 2.0, 3.0])),
        (
            "d_mat",
            num(arr(vec![1.0f64, 2.0, 3.0, 4.0, 5.0, 6.0], &[2, 3])),
        ),
        (
            "d_nonfinite",
            num(arr(vec![f64::NAN, f64::INFINITY, -0.0, -1e300], &[4, 1])),
        ),
        (
            "s_3d",
            num(arr((0..24).map(|x| x as f32 * 0.5).collect(), &[2, 3, 4])),
        ),
        ("i8", num(arr(vec![-128i8, 0, 5, 127], &[2, 2]))),
        ("u8", num(arr(vec![0u8, 1, 200, 255], &[2, 2]))),
        ("i16", num(arr(vec![-30000i16, 1, 2, 30000], &[2, 2]))),
        ("u16", num(arr(vec![0u16, 1, 2, 65535], &[2, 2]))),
        ("i32", num(arr(vec![i32::MIN, 1, 2, i32::MAX], &[2, 2]))),
        ("u32", num(arr(vec![0u32, 1, 2, u32::MAX], &[2, 2]))),
        ("i64", num(arr(vec![i64::MIN + 1, 1, 2, i64::MAX], &[2, 2]))),
        ("u64", num(arr(vec![0u64, 1, 2, 1 << 60], &[2, 2]))),
        (
            "z_double",
            num(arr(
                vec![c64(1.0, -1.0), c64(0.0, 2.5), c64(-3.0, 0.0), c64(4.0, 4.0)],
                &[2, 2],
            )),
        ),
        (
            "z_single",
            num(arr(
                vec![sciio_core::num_complex::Complex::new(1.5f32, -0.5)],
                &[1, 1],
            )),
        ),
        (
            "logical",
            num(arr(vec![true, false, true, true, false, false], &[2, 3])),
        ),
        ("logical_scalar", MatValue::from(true)),
        ("text", MatValue::from("hello")),
        ("text_unicode", MatValue::from("héllo wörld €")),
        ("text_astral", MatValue::from("a😀b")),
        (
            "text_2d",
            MatValue::Char(CharArray {
                shape: vec![2, 3],
                codes: "adbecf".chars().map(u32::from).collect(),
                numpy: None,
            }),
        ),
        ("e_double", empty(ScalarKind::Float(8), &[0, 0])),
        ("e_int8", empty(ScalarKind::Int(1), &[0, 5])),
        ("e_logical", empty(ScalarKind::Bool, &[3, 0])),
        (
            "e_char",
            MatValue::Char(CharArray {
                shape: vec![0, 0],
                codes: vec![],
                numpy: None,
            }),
        ),
        (
            "e_cell",
            MatValue::Cell(CellArray {
                shape: vec![0, 3],
                items: vec![],
            }),
        ),
        (
            "cell_row",
            MatValue::Cell(CellArray::row(vec![
                MatValue::from(1.0),
                MatValue::from("two"),
                MatValue::from(vec![3.0, 4.0]),
            ])),
        ),
        (
            "cell_of_cells",
            MatValue::Cell(CellArray::row(vec![
                MatValue::Cell(CellArray::row(vec![
                    MatValue::from("in"),
                    MatValue::from(7.0),
                ])),
                MatValue::Cell(CellArray::row(vec![MatValue::Cell(CellArray::row(vec![
                    MatValue::from(false),
                ]))])),
            ])),
        ),
        (
            "cell_2x2",
            MatValue::Cell(
                CellArray::new(
                    vec![2, 2],
                    vec![
                        MatValue::from(1.0),
                        MatValue::from("b"),
                        MatValue::from(3.0),
                        MatValue::from("d"),
                    ],
                )
                .unwrap(),
            ),
        ),
        (
            "st",
            MatValue::Struct(StructArray::scalar(vec![
                ("a".into(), MatValue::from(1.0)),
                ("name".into(), MatValue::from("x")),
                (
                    "c".into(),
                    MatValue::Cell(CellArray::row(vec![
                        MatValue::from(2.0),
                        MatValue::from("y"),
                    ])),
                ),
                (
                    "inner".into(),
                    MatValue::Struct(StructArray::scalar(vec![(
                        "deep".into(),
                        num(arr(vec![1i32, 2, 3], &[3, 1])),
                    )])),
                ),
            ])),
        ),
        (
            "st_array",
            MatValue::Struct(
                StructArray::new(
                    vec![1, 2],
                    vec!["p".into(), "q".into()],
                    vec![
                        vec![MatValue::from(1.0), MatValue::from("one")],
                        vec![MatValue::from(vec![2.0, 3.0]), MatValue::from("two")],
                    ],
                )
                .unwrap(),
            ),
        ),
        (
            "big",
            num(arr(
                (0..60_000).map(|i| (i % 97) as f64 * 0.25).collect(),
                &[300, 200],
            )),
        ),
    ];
    v.push((
        "sp_double",
        MatValue::Sparse(SparseMatrix {
            nrows: 4,
            ncols: 3,
            ir: vec![1, 0, 3, 2],
            jc: vec![0, 1, 3, 4],
            data: NdArray::from_vec(vec![2.0f64, 1.5, 4.0, 3.0], &[4]).unwrap(),
        }),
    ));
    v.push((
        "sp_complex",
        MatValue::Sparse(SparseMatrix {
            nrows: 2,
            ncols: 2,
            ir: vec![0, 1],
            jc: vec![0, 1, 2],
            data: NdArray::from_vec(vec![c64(1.0, 2.0), c64(-1.0, 0.5)], &[2]).unwrap(),
        }),
    ));
    v.push((
        "sp_logical",
        MatValue::Sparse(SparseMatrix {
            nrows: 3,
            ncols: 2,
            ir: vec![2, 0],
            jc: vec![0, 1, 2],
            data: NdArray::from_vec(vec![true, true], &[2]).unwrap(),
        }),
    ));
    v.into_iter().map(|(n, x)| (n.to_string(), x)).collect()
}
