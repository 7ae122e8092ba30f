//! Untrusted input: every malformed header gets one clear error of the right kind (never a
//! panic or a huge allocation), and what older writers produced is still accepted.

use sciio_core::{ErrorKind, Limits};

/// An NPY file of the given version with `text` as its header (padded like numpy) and `data`.
fn npy(major: u8, text: &str, data: &[u8]) -> Vec<u8> {
    let mut out = b"\x93NUMPY".to_vec();
    out.extend_from_slice(&[major, 0]);
    let prefix = if major == 1 { 10 } else { 12 };
    let body = text.as_bytes();
    let pad = 64 - (prefix + body.len() + 1) % 64;
    let len = body.len() + pad + 1;
    if major == 1 {
        out.extend_from_slice(&(len as u16).to_le_bytes());
    } else {
        out.extend_from_slice(&(len as u32).to_le_bytes());
    }
    out.extend_from_slice(body);
    out.extend(std::iter::repeat_n(b' ', pad));
    out.push(b'\n');
    out.extend_from_slice(data);
    out
}

fn read(bytes: &[u8]) -> sciio_core::Result<sciio_core::NdArray> {
    sciio_npy::read_array_sized(bytes, &Limits::default(), bytes.len() as u64)
}

fn expect(bytes: &[u8], kind: ErrorKind, words: &str) {
    let err = read(bytes).map(|_| ()).unwrap_err();
    assert_eq!(err.kind(), kind, "{err}");
    assert!(
        err.to_string().contains(words),
        "{err:?} should say {words:?}"
    );
    // The stream reader agrees.
    let streamed = sciio_npy::read_array(bytes, &Limits::default())
        .map(|_| ())
        .unwrap_err();
    assert_eq!(streamed.kind(), kind, "{streamed}");
}

const OK: &str = "{'descr': '<i2', 'fortran_order': False, 'shape': (2,), }";

#[test]
fn bad_magic_and_versions() {
    let mut bytes = npy(1, OK, &[1, 0, 2, 0]);
    assert_eq!(read(&bytes).unwrap().len(), 2);
    bytes[1] = b'X';
    expect(&bytes, ErrorKind::Format, "magic");
    let err = read(&bytes).map(|_| ()).unwrap_err();
    assert_eq!(err.location().offset, Some(0));
    for (major, minor) in [(0, 0), (1, 1), (4, 0), (255, 255)] {
        let mut bytes = npy(1, OK, &[1, 0, 2, 0]);
        bytes[6] = major;
        bytes[7] = minor;
        expect(&bytes, ErrorKind::Unsupported, &format!("{major}.{minor}"));
    }
    expect(b"", ErrorKind::Truncated, "magic");
    expect(b"\x93NUMPY\x01", ErrorKind::Truncated, "magic");
    expect(b"\x93NUMPY\x02\x00\x10\x00", ErrorKind::Truncated, "length");
}

#[test]
fn header_lengths_are_checked_before_allocating() {
    // A 4 GiB header length in a 20-byte file.
    let mut bytes = b"\x93NUMPY\x02\x00\xff\xff\xff\xff{'descr'".to_vec();
    let err = read(&bytes).map(|_| ()).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::LimitExceeded, "{err}");
    bytes[8..12].copy_from_slice(&1000u32.to_le_bytes());
    expect(&bytes, ErrorKind::Truncated, "header announces 1000 bytes");
    let small = Limits::default().max_header(32);
    let ok = npy(1, OK, &[1, 0, 2, 0]);
    let err = sciio_npy::read_array(&ok[..], &small)
        .map(|_| ())
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::LimitExceeded);
}

#[test]
fn malformed_dicts() {
    let cases: &[(&str, &str)] = &[
        ("[1, 2]", "not a dictionary"),
        ("'descr'", "not a dictionary"),
        ("{'descr': '<i2', 'shape': (2,)}", "keys"),
        (
            "{'descr': '<i2', 'fortran_order': False, 'shape': (2,), 'extra': 1}",
            "keys",
        ),
        (
            "{'descr': '<i2', 'fortran_order': False, 'shape': [2]}",
            "shape is not a tuple",
        ),
        (
            "{'descr': '<i2', 'fortran_order': False, 'shape': (-2,)}",
            "invalid dimension",
        ),
        (
            "{'descr': '<i2', 'fortran_order': False, 'shape': ('2',)}",
            "not an int",
        ),
        (
            "{'descr': '<i2', 'fortran_order': 0, 'shape': (2,)}",
            "fortran_order is not a bool",
        ),
        (
            "{'descr': '<i3', 'fortran_order': False, 'shape': (2,)}",
            "not understood",
        ),
        (
            "{'descr': 42, 'fortran_order': False, 'shape': (2,)}",
            "descr",
        ),
        (
            "{'descr': [('a',)], 'fortran_order': False, 'shape': (2,)}",
            "2 or 3 items",
        ),
        (
            "{'descr': [('a', '<i2'), ('a', '<i2')], 'fortran_order': False, 'shape': (2,)}",
            "duplicate",
        ),
        (
            "{'descr': [(1, '<i2')], 'fortran_order': False, 'shape': (2,)}",
            "name",
        ),
        (
            "{'descr': ('<i2', -1), 'fortran_order': False, 'shape': (2,)}",
            "dimension",
        ),
        (
            "{'descr': __import__('os'), 'fortran_order': False, 'shape': (2,)}",
            "Python literal",
        ),
        (
            "{'descr': '<i2', 'fortran_order': False, 'shape': (2,), 'descr': '<i2'}",
            "duplicate dict key",
        ),
        (
            "{'descr': '<i2', 'fortran_order': False, 'shape': (2,)",
            "Python literal",
        ),
        (
            "{'descr': '<i2', 'fortran_order': False, 'shape': (2.0,)}",
            "Python literal",
        ),
        (
            "{'descr': '<i2' 'fortran_order': False, 'shape': (2,)}",
            "Python literal",
        ),
        ("", "Python literal"),
    ];
    for (text, words) in cases {
        expect(&npy(1, text, &[0; 4]), ErrorKind::Format, words);
    }
    let deep = format!(
        "{{'descr': {}'<i2'{}, 'fortran_order': False, 'shape': (2,)}}",
        "[".repeat(200),
        "]".repeat(200)
    );
    expect(&npy(2, &deep, &[0; 4]), ErrorKind::Format, "nested deeper");
    // Version 3.0 headers are UTF-8; 1.0 headers are Latin-1 and always decode.
    let mut bad_utf8 = npy(3, OK, &[0; 4]);
    bad_utf8[14] = 0xff;
    expect(&bad_utf8, ErrorKind::Format, "UTF-8");
}

#[test]
fn shapes_and_data_lengths() {
    let huge = "{'descr': '<f8', 'fortran_order': False, 'shape': (4611686018427387904, 4611686018427387904), }";
    expect(&npy(1, huge, &[]), ErrorKind::Format, "overflows");
    let big = "{'descr': '<f8', 'fortran_order': False, 'shape': (1000000000,), }";
    expect(&npy(1, big, &[0; 8]), ErrorKind::Truncated, "only 8 follow");
    let err = read(&npy(1, big, &[0; 8])).map(|_| ()).unwrap_err();
    assert_eq!(err.location().offset, Some(128));
    // A stream of unknown length: the allocation limit stops it.
    let limits = Limits::default().max_alloc(1 << 20);
    let err = sciio_npy::read_array(&npy(1, big, &[0; 8])[..], &limits)
        .map(|_| ())
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::LimitExceeded);
    // Within the limit but the stream ends early.
    let err = sciio_npy::read_array(&npy(1, OK, &[0; 3])[..], &Limits::default())
        .map(|_| ())
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Truncated);
    // Zero-size elements take no bytes, but their number is bounded all the same.
    let many = "{'descr': '|S0', 'fortran_order': False, 'shape': (1099511627776,), }";
    expect(
        &npy(1, many, &[]),
        ErrorKind::LimitExceeded,
        "element count",
    );
    let some = "{'descr': '|S0', 'fortran_order': False, 'shape': (1000,), }";
    assert_eq!(read(&npy(1, some, &[])).unwrap().len(), 1000);
    // Trailing bytes after the data are ignored, like np.load does.
    assert_eq!(
        read(&npy(1, OK, &[1, 0, 2, 0, 9, 9])).unwrap().as_bytes(),
        &[1, 0, 2, 0]
    );
    // Booleans other than 0/1 are readable as values but not viewable as Rust bools.
    let bools = read(&npy(
        1,
        "{'descr': '|b1', 'fortran_order': False, 'shape': (2,)}",
        &[1, 7],
    ))
    .unwrap();
    assert!(bools.view::<bool>().is_err());
    assert_eq!(bools.get(&[1]).unwrap(), sciio_core::Value::Bool(true));
}

#[test]
fn objects_are_refused_never_unpickled() {
    for descr in [
        "'|O'",
        "'|O8'",
        "[('a', '<i4'), ('o', '|O')]",
        "[('s', [('o', '|O')], (2,))]",
    ] {
        let text = format!("{{'descr': {descr}, 'fortran_order': False, 'shape': (1,), }}");
        // A pickle opcode stream as the data: it must never be looked at.
        let bytes = npy(1, &text, b"\x80\x02cos\nsystem\nq\x00.");
        let header = sciio_npy::parse_header(&bytes).unwrap();
        assert!(header.dtype.has_object());
        expect(&bytes, ErrorKind::Refused, "|O");
    }
}

#[test]
fn what_older_writers_wrote_is_accepted() {
    let data = [1u8, 0, 2, 0];
    let texts = [
        // Python 2 numpy: long suffix, any key order, no trailing comma.
        "{'descr': '<i2', 'fortran_order': False, 'shape': (2L,)}",
        "{'shape': (2,), 'fortran_order': False, 'descr': '<i2'}",
        "{u'descr': u'<i2', u'fortran_order': False, u'shape': (2L,), }",
        "{\"descr\": \"<i2\", \"fortran_order\": False, \"shape\": (2, )}",
        "  {'descr' : '<i2' ,\n 'fortran_order':False,'shape':(2,),}  ",
        "{'descr': '=i2', 'fortran_order': False, 'shape': (2,)}",
        "{'descr': 'h', 'fortran_order': False, 'shape': (2,)}",
    ];
    for text in texts {
        for major in [1, 2, 3] {
            let a = read(&npy(major, text, &data)).unwrap_or_else(|e| panic!("{text}: {e}"));
            assert_eq!(
                a.view::<i16>().unwrap().as_slice().unwrap(),
                &[1, 2],
                "{text}"
            );
        }
    }
    // numpy < 1.9 aligned the data to 16 bytes, not 64.
    let text = "{'descr': '<i2', 'fortran_order': False, 'shape': (2,), }";
    let mut old = b"\x93NUMPY\x01\x00".to_vec();
    let pad = 16 - (10 + text.len() + 1) % 16;
    old.extend_from_slice(&((text.len() + pad + 1) as u16).to_le_bytes());
    old.extend_from_slice(text.as_bytes());
    old.extend(std::iter::repeat_n(b' ', pad));
    old.push(b'\n');
    let header_len = old.len();
    old.extend_from_slice(&data);
    assert_eq!(header_len % 16, 0);
    assert_ne!(header_len % 64, 0);
    let a = read(&old).unwrap();
    assert_eq!(a.view::<i16>().unwrap().as_slice().unwrap(), &[1, 2]);
    // Latin-1 field names in a 1.0 header.
    let latin = "{'descr': [('caf\u{e9}', '<i2')], 'fortran_order': False, 'shape': (2,)}";
    let bytes: Vec<u8> = npy(1, "", &[])[..8].to_vec();
    let mut file = bytes;
    let body: Vec<u8> = latin.chars().map(|c| c as u32 as u8).collect();
    let pad = 64 - (10 + body.len() + 1) % 64;
    file.extend_from_slice(&((body.len() + pad + 1) as u16).to_le_bytes());
    file.extend_from_slice(&body);
    file.extend(std::iter::repeat_n(b' ', pad));
    file.push(b'\n');
    file.extend_from_slice(&data);
    let a = read(&file).unwrap();
    assert_eq!(a.dtype().as_record().unwrap().fields[0].name, "caf\u{e9}");
}
