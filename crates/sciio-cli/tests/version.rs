//! `sciio --version` names the crate's version and the libhdf5 linked in.
#![cfg(feature = "hdf5")]

#[test]
fn version_names_the_linked_libhdf5() {
    let out = sciio_testkit::child_command(env!("CARGO_BIN_EXE_sciio"))
        .arg("--version")
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let text = String::from_utf8(out.stdout).unwrap();
    let line = text.trim_end();
    let prefix = format!("sciio {} (libhdf5 ", env!("CARGO_PKG_VERSION"));
    let version = line
        .strip_prefix(&prefix)
        .and_then(|rest| rest.strip_suffix(')'))
        .unwrap_or_else(|| panic!("unexpected --version output: {line:?}"));
    let parts: Vec<u32> = version.split('.').map(|p| p.parse().unwrap()).collect();
    assert_eq!(parts.len(), 3, "{version}");
    assert!(parts[0] >= 1, "{version}");
    assert_eq!(text.lines().count(), 1, "{text}");
}
