//! Stores whose pandas attributes or pickles were altered: each key read is a one-line error
//! naming the key (and the attribute where one is to blame), never a panic; a hostile pickle is
//! only read, never run.

use sciio_hdfstore::HdfStore;
use sciio_testkit::{run_python, tempdir};

const MAKE: &str = r#"
import sys, os, pickle, numpy as np, pandas as pd, tables, warnings
warnings.simplefilter("ignore")
d = sys.argv[1]
df = pd.DataFrame({'x': np.arange(4.0), 's': ['a', 'b', None, 'd']})
def store(name, fmt):
    p = os.path.join(d, name)
    df.to_hdf(p, key='df', format=fmt)
    return tables.open_file(p, mode='a')

class Evil:
    def __reduce__(self):
        return (os.system, ('touch ' + os.path.join(d, 'PWNED'),))

h = store('evil_axes.h5', 'table')
h.root.df._v_attrs.non_index_axes = Evil()
h.close()
h = store('nblocks.h5', 'fixed')
h.root.df._v_attrs.nblocks = 1000
h.close()
h = store('no_items.h5', 'fixed')
h.remove_node('/df/block0_items')
h.close()
h = store('bad_pickle.h5', 'fixed')
node = [n for n in h.walk_nodes('/df') if isinstance(n, tables.VLArray)][0]
path = node._v_pathname
h.remove_node(path)
vl = h.create_vlarray(os.path.dirname(path), os.path.basename(path), tables.VLStringAtom())
vl.append(b'\x80\x04garbage')
vl._v_attrs.transposed = True
h.close()
h = store('kind.h5', 'fixed')
h.root.df.axis1._v_attrs.kind = 'wonderful'
h.close()
h = store('variety.h5', 'fixed')
h.root.df._v_attrs.axis1_variety = 'sideways'
h.close()
h = store('short_kind.h5', 'table')
h.root.df.table._v_attrs.values_block_0_kind = []
h.close()
h = store('pandas_type.h5', 'fixed')
h.root.df._v_attrs.pandas_type = 'panel4d'
h.close()
"#;

#[test]
fn damaged_stores_give_one_line_errors() {
    let dir = tempdir();
    run_python(MAKE, &[&dir.path().to_string_lossy()]);
    let cases = [
        ("evil_axes.h5", "non_index_axes"),
        ("nblocks.h5", "block"),
        ("no_items.h5", "block0_items"),
        ("bad_pickle.h5", "block"),
        ("kind.h5", "kind"),
        ("variety.h5", "axis1_variety"),
        ("short_kind.h5", "values_block_0_kind"),
        ("pandas_type.h5", "pandas_type"),
    ];
    for (name, names) in cases {
        let store = HdfStore::open(dir.path().join(name)).unwrap();
        let keys = store.keys().unwrap();
        assert_eq!(keys.len(), 1, "{name}");
        let e = store.read("/df").unwrap_err().to_string();
        eprintln!("{name}: {e}");
        assert_eq!(e.lines().count(), 1, "{name}: {e}");
        assert!(e.contains("/df") && e.contains(names), "{name}: {e}");
    }
    assert!(!dir.path().join("PWNED").exists(), "a pickle was run");
}
