"""Checks the v1 B-tree of a symbol-table group of an HDF5 file (superblock 0, 8-byte
addresses, any user block) as libhdf5 relies on it: keys ascend (strcmp of the names in the
local heap), each node's children are the level below, every level's sibling pointers chain
its nodes in order, each symbol table node's names lie between its keys. h5py reads a group
through lookups and iteration only; this also checks the parts they do not use (siblings).

usage: check_group_btree.py FILE GROUP   (GROUP: a link of the root group, or / for the root)
Prints the node count per level and the number of links.
"""
import struct
import sys

UNDEF = 2**64 - 1
data = open(sys.argv[1], "rb").read()
base = data.find(b"\x89HDF\r\n\x1a\n")


def u64(a):
    return struct.unpack_from("<Q", data, base + a)[0]


def heap_names(heap):
    assert data[base + heap:base + heap + 4] == b"HEAP", hex(heap)
    block = base + u64(heap + 24)
    return lambda off: data[block + off:data.index(b"\0", block + off)]


def entry(at):
    """(name offset, header, cache type, B-tree, heap) of a symbol table entry."""
    cache = struct.unpack_from("<I", data, base + at + 16)[0]
    return u64(at), u64(at + 8), cache, u64(at + 24), u64(at + 32)


def snod(addr):
    assert data[base + addr:base + addr + 4] == b"SNOD", hex(addr)
    n = struct.unpack_from("<H", data, base + addr + 6)[0]
    return [entry(addr + 8 + 40 * i) for i in range(n)]


def node(addr):
    assert data[base + addr:base + addr + 5] == b"TREE\0", hex(addr)
    level = data[base + addr + 5]
    n = struct.unpack_from("<H", data, base + addr + 6)[0]
    keys = [u64(addr + 24 + 16 * i) for i in range(n + 1)]
    kids = [u64(addr + 32 + 16 * i) for i in range(n)]
    return level, u64(addr + 8), u64(addr + 16), keys, kids


def walk(btree, heap):
    """Checks the tree; returns node counts per level and the entries in order."""
    name = heap_names(heap)
    levels, entries = {}, []

    def visit(addr, want_level):
        level, left, right, keys, kids = node(addr)
        assert want_level is None or level == want_level, (hex(addr), level, want_level)
        levels.setdefault(level, []).append((addr, left, right))
        names = [name(k) for k in keys]
        for i, kid in enumerate(kids):
            if level > 0:
                visit(kid, level - 1)
                continue
            for e in snod(kid):
                n = name(e[0])
                assert (i == 0 and keys[0] == 0) or names[i] < n, (n, names[i])
                assert n <= names[i + 1], (n, names[i + 1])
                entries.append((n, e))

    visit(btree, None)
    for level, nodes in levels.items():
        for i, (addr, left, right) in enumerate(nodes):
            assert left == (nodes[i - 1][0] if i else UNDEF), (level, i, hex(left))
            assert right == (nodes[i + 1][0] if i + 1 < len(nodes) else UNDEF), (level, i)
    names = [n for n, _ in entries]
    assert names == sorted(names) and len(set(names)) == len(names)
    return {level: len(nodes) for level, nodes in sorted(levels.items())}, entries


# The superblock's root entry (version 0, 8-byte addresses) holds the root group's tree.
_, _, _, root_tree, root_heap = entry(56)
counts, entries = walk(root_tree, root_heap)
if sys.argv[2] != "/":
    found = [e for n, e in entries if n == sys.argv[2].encode()]
    assert found and found[0][2] == 1, f"no group {sys.argv[2]} with cached addresses"
    counts, entries = walk(found[0][3], found[0][4])
print(counts, len(entries))
