//! `MatFile::check_plain_data`: the cheap checks that tell, before any of its data is read,
//! whether a large variable streams (`copy_plain_data`) or is damaged, on files made by
//! `python/mat_damaged_large.py` (scipy.io v7 and hdf5storage v7.3 files, damaged).

use sciio_core::{DType, ScalarKind};
use sciio_mat::MatFile;

#[test]
fn damage_in_headers_and_end_chunks_is_found_before_the_data_is_read() {
    let dir = sciio_testkit::tempdir();
    let d = dir.path();
    sciio_testkit::run_python_script("python/mat_damaged_large.py", &[d.to_str().unwrap()]);
    let double = DType::scalar(ScalarKind::Float(8));
    let dims = [1500, 1500];
    for version in ["v7", "v73"] {
        let open = |suffix: &str| MatFile::open(d.join(format!("{version}{suffix}.mat"))).unwrap();
        let (good, cut, deep) = (open(""), open("_cut"), open("_deep"));
        for name in ["good", "bad"] {
            assert!(
                good.check_plain_data(name, &double, &dims).unwrap(),
                "{version} {name}"
            );
        }
        // Not streamed as asked: another size, another type, a small variable.
        assert!(!good
            .check_plain_data("good", &double, &[1500, 1499])
            .unwrap());
        let single = DType::scalar(ScalarKind::Float(4));
        assert!(!good.check_plain_data("good", &single, &dims).unwrap());
        assert!(!good.check_plain_data("small", &double, &[3, 4]).unwrap());
        // The damage the cheap checks see: an error naming the file and the variable, which
        // a whole read fails on too.
        let e = cut.check_plain_data("bad", &double, &dims).unwrap_err();
        let text = e.to_string();
        assert!(text.contains(&format!("{version}_cut.mat")), "{text}");
        assert!(text.contains("/bad"), "{text}");
        assert!(
            cut.read("bad").is_err(),
            "{version}: the cut variable reads"
        );
        assert!(cut.check_plain_data("good", &double, &dims).unwrap());
        // Damage deep inside the data is not looked for: found only by reading it.
        assert!(deep.check_plain_data("bad", &double, &dims).unwrap());
        assert!(
            deep.read("bad").is_err(),
            "{version}: the damaged variable reads"
        );
    }
}
