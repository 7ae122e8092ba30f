//! pandas HDFStore files (`df.to_hdf`, fixed and table formats, written by pandas through
//! PyTables) open, and every leaf reads with the values PyTables reads. Object (string) blocks of
//! the fixed format are pickled by pandas: sciio refuses those leaves, never unpickling them.

mod common;

use sciio_testkit::{run_python, tempdir};

#[test]
fn pandas_hdfstore_files_read_like_pytables() {
    let dir = tempdir();
    let code = "import sys, os, numpy as np, pandas as pd\n\
        d = sys.argv[1]\n\
        n = 1000\n\
        df = pd.DataFrame({'i': np.arange(n, dtype='int64'), 'f': np.linspace(0, 1, n),\n\
        \x20                  'f4': np.arange(n, dtype='float32'), 'b': np.arange(n) % 2 == 0,\n\
        \x20                  't': pd.date_range('2020-01-01', periods=n, freq='s')})\n\
        df.to_hdf(os.path.join(d, 'fixed.h5'), key='df', format='fixed')\n\
        df.assign(s=[f's{i}' for i in range(n)]).to_hdf(os.path.join(d, 'table.h5'), key='df', format='table', complevel=5, complib='blosc:lz4')\n\
        df.to_hdf(os.path.join(d, 'table.h5'), key='grp/df2', format='table', data_columns=True)\n\
        pd.Series(np.arange(10.0)).to_hdf(os.path.join(d, 'fixed.h5'), key='s', format='fixed')\n\
        df.assign(s=[f's{i}' for i in range(n)]).to_hdf(os.path.join(d, 'fixed_str.h5'), key='df', format='fixed')\n";
    run_python(code, &[&dir.path().to_string_lossy()]);
    let mut failures = Vec::new();
    let mut total = 0;
    for name in ["fixed.h5", "table.h5"] {
        let file = dir.path().join(name);
        let dump = tempdir();
        let (n, errors) = common::dump(&file, dump.path());
        total += n;
        failures.extend(errors.into_iter().map(|e| format!("{name}: {e}")));
        let out = common::check_with_pytables(&file, dump.path());
        failures.extend(
            out.lines()
                .filter(|l| !l.starts_with("OK"))
                .map(String::from),
        );
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(total >= 10, "only {total} leaves");

    // A fixed-format frame with a string column: pandas pickles that block (a VLArray of
    // objects); sciio refuses exactly that leaf and reads the others.
    let dump = tempdir();
    let (n, errors) = common::dump(&dir.path().join("fixed_str.h5"), dump.path());
    assert!(n >= 5, "only {n} leaves read");
    assert!(
        !errors.is_empty() && errors.iter().all(|e| e.contains("[Refused]")),
        "{errors:?}"
    );
}
