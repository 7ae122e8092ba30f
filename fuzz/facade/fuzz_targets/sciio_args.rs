//! The facade's parsers of untrusted text and bytes: `--compress` specs, `FILE[:NODE]`
//! arguments and the format sniffing of a file's first bytes. None may panic.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = sciio::Format::from_magic(data);
    if let Ok(text) = std::str::from_utf8(data) {
        if let Ok(spec) = sciio::CompressSpec::parse(text) {
            // What parses prints back to something that parses to the same spec.
            let again = sciio::CompressSpec::parse(&spec.to_string());
            assert_eq!(again.ok(), Some(spec));
        }
        let _ = sciio::Target::parse(text);
        let _ = text.parse::<sciio::Format>();
    }
});
