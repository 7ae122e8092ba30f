//! Laying out a native file's metadata at close: every address is assigned first (global heap
//! collections, then per object its header and, for groups, local heap, B-tree nodes and
//! symbol table nodes; for reference datasets their data; for chunked ones their chunk
//! B-tree), then everything is encoded in that order into one buffer.

use sciio_core::{Error, Result};

use super::messages::{self as m, heap_name_size, Bytes, Entry, Message, Node, UNDEF};
use super::model::{
    Attr, AttrData, ChunkRecord, Kind, Link, Links, Object, Run, State, Storage, REF_TAG,
};
use crate::types::H5Type;

/// Superblock version 0 with 8-byte offsets and lengths and the root entry.
pub(super) const SUPERBLOCK_SIZE: u64 = 96;
/// Group B-tree leaf K (symbol table nodes hold 2K entries) and internal K, libhdf5's defaults.
pub(super) const GROUP_LEAF_K: usize = 4;
pub(super) const GROUP_NODE_K: usize = 16;
/// Offsets in a v1 B-tree node of its left and right siblings' addresses and its first key.
pub(super) const LEFT_SIBLING: u64 = 8;
pub(super) const RIGHT_SIBLING: u64 = 16;
const FIRST_KEY: u64 = 24;
/// Chunk B-tree K (`H5F_ISTORE_K`, not recorded in superblock 0).
const CHUNK_K: usize = 32;
/// Global heap collections are cut at about this size.
const GCOL_TARGET: u64 = 1 << 20;

/// The chunk grid of a dataset: chunk `i` in C order over the grid, with its element offsets.
pub(super) struct ChunkGrid<'a> {
    dims: &'a [u64],
    chunk: &'a [u64],
    grid: Vec<u64>,
    elem: usize,
    count: usize,
}

impl<'a> ChunkGrid<'a> {
    pub fn new(dims: &'a [u64], chunk: &'a [u64], elem: usize) -> Result<ChunkGrid<'a>> {
        if chunk.len() != dims.len() || chunk.contains(&0) {
            return Err(Error::invalid_input(format!(
                "chunk shape {chunk:?} does not fit shape {dims:?}"
            )));
        }
        let grid: Vec<u64> = dims
            .iter()
            .zip(chunk)
            .map(|(d, c)| d.div_ceil(*c))
            .collect();
        let count = grid
            .iter()
            .try_fold(1usize, |a, &g| a.checked_mul(g as usize))
            .ok_or_else(|| Error::invalid_input("too many chunks"))?;
        chunk
            .iter()
            .try_fold(elem as u64, |a, &c| a.checked_mul(c))
            .filter(|&b| b < u32::MAX as u64)
            .ok_or_else(|| Error::invalid_input("chunks must be smaller than 4 GiB"))?;
        Ok(ChunkGrid {
            dims,
            chunk,
            grid,
            elem,
            count,
        })
    }

    pub fn count(&self) -> usize {
        self.count
    }

    /// Element offsets of chunk `i`.
    pub fn offset(&self, mut i: usize) -> Vec<u64> {
        let mut o = vec![0u64; self.grid.len()];
        for d in (0..self.grid.len()).rev() {
            let g = self.grid[d] as usize;
            o[d] = (i % g) as u64 * self.chunk[d];
            i /= g;
        }
        o
    }

    /// The chunk at `offset` cut from the whole dataset `data` (C order), zero-padded at the
    /// dataset's edges.
    pub fn tile(&self, data: &[u8], offset: &[u64]) -> Vec<u8> {
        let rank = self.dims.len();
        let chunk_elems: u64 = self.chunk.iter().product();
        let mut tile = vec![0u8; chunk_elems as usize * self.elem];
        let last = rank - 1;
        let run = (self.dims[last] - offset[last]).min(self.chunk[last]) as usize * self.elem;
        // Row strides (in elements) of the dataset and of the chunk.
        let mut src_stride = vec![1u64; rank];
        let mut dst_stride = vec![1u64; rank];
        for d in (0..last).rev() {
            src_stride[d] = src_stride[d + 1] * self.dims[d + 1];
            dst_stride[d] = dst_stride[d + 1] * self.chunk[d + 1];
        }
        let extent: Vec<u64> = (0..last)
            .map(|d| (self.dims[d] - offset[d]).min(self.chunk[d]))
            .collect();
        if extent.contains(&0) {
            return tile;
        }
        let mut idx = vec![0u64; last];
        loop {
            let src: u64 = (0..rank)
                .map(|d| (offset[d] + idx.get(d).copied().unwrap_or(0)) * src_stride[d])
                .sum();
            let dst: u64 = (0..last).map(|d| idx[d] * dst_stride[d]).sum();
            let s = src as usize * self.elem;
            let t = dst as usize * self.elem;
            tile[t..t + run].copy_from_slice(&data[s..s + run]);
            // Next row index, innermost outer dimension fastest.
            let mut d = last;
            loop {
                if d == 0 {
                    return tile;
                }
                d -= 1;
                idx[d] += 1;
                if idx[d] < extent[d] {
                    break;
                }
                idx[d] = 0;
            }
        }
    }
}

/// Where each object's metadata goes.
#[derive(Default, Clone)]
struct Place {
    header: u64,
    /// Groups: heap header, heap data, B-tree nodes by level (root last), SNODs.
    heap: u64,
    heap_data: u64,
    heap_size: u64,
    nodes: Vec<Vec<u64>>,
    snods: Vec<u64>,
    /// Reference and vlen datasets: their data.
    data: u64,
    /// A group's B-tree root when it is not the last of `nodes` (a run's level-0 node).
    root: Option<u64>,
}

impl Place {
    fn btree_root(&self) -> u64 {
        self.root
            .or_else(|| self.nodes.last().and_then(|l| l.first()).copied())
            .unwrap_or(UNDEF)
    }
}

/// A level-`level` node of a group's B-tree over `children` (address and local heap offset of
/// its last name), the key before the first being `left_key`.
pub(super) fn group_tree_node(
    level: u8,
    left: u64,
    right: u64,
    left_key: u64,
    children: &[(u64, u64)],
) -> Vec<u8> {
    let keys: Vec<Vec<u8>> = std::iter::once(left_key)
        .chain(children.iter().map(|c| c.1))
        .map(|k| k.to_le_bytes().to_vec())
        .collect();
    let addrs: Vec<u64> = children.iter().map(|c| c.0).collect();
    let node = Node {
        node_type: 0,
        level,
        left,
        right,
        keys: &keys,
        children: &addrs,
    };
    let mut out = Vec::with_capacity(m::node_size(GROUP_NODE_K, 8) as usize);
    m::btree_node(&node, GROUP_NODE_K, 8, &mut out);
    out
}

/// Node counts per level for `leaves` children and `fanout` children per node (at least one
/// level-0 node, so that empty groups have a root).
fn level_counts(leaves: usize, fanout: usize) -> Vec<usize> {
    let mut counts = vec![leaves.div_ceil(fanout).max(1)];
    while let Some(&n) = counts.last().filter(|&&n| n > 1) {
        counts.push(n.div_ceil(fanout));
    }
    counts
}

/// A global heap ID of each vlen item: (collection index, object index), `None` when empty.
type HeapIds = Vec<Vec<Vec<Option<(usize, u16)>>>>;
/// A vlen item by (object, attribute, item) index.
type ItemKey = (usize, usize, usize);

/// Assigns vlen attribute items to collections; returns per object, per attribute, per item
/// its heap ID, and the collections' objects.
fn plan_global_heap(st: &State) -> (HeapIds, Vec<Vec<ItemKey>>) {
    let mut ids = Vec::with_capacity(st.objects.len());
    let mut collections: Vec<Vec<ItemKey>> = Vec::new();
    let mut size = u64::MAX;
    for (o, obj) in st.objects.iter().enumerate() {
        let mut per_attr = Vec::with_capacity(obj.attrs.len() + 1);
        // The attributes' items, then (as list `attrs.len()`) a vlen dataset's own.
        for a in 0..=obj.attrs.len() {
            let items = match vlen_items(st, o, a) {
                Some(items) => items,
                None => {
                    per_attr.push(Vec::new());
                    continue;
                }
            };
            let mut per_item = Vec::with_capacity(items.len());
            for (i, item) in items.iter().enumerate() {
                if item.is_empty() {
                    per_item.push(None);
                    continue;
                }
                let need = 16 + item.len().next_multiple_of(8) as u64;
                let full = collections.last().is_none_or(|c| c.len() >= 65535);
                if full || size + need > GCOL_TARGET {
                    collections.push(Vec::new());
                    size = 16;
                }
                let c = collections.len() - 1;
                collections[c].push((o, a, i));
                size += need;
                per_item.push(Some((c, collections[c].len() as u16)));
            }
            per_attr.push(per_item);
        }
        ids.push(per_attr);
    }
    (ids, collections)
}

/// The vlen items of object `o`'s attribute `a`, or (`a == attrs.len()`) of its vlen dataset.
fn vlen_items(st: &State, o: usize, a: usize) -> Option<&[Vec<u8>]> {
    let obj = &st.objects[o];
    match obj.attrs.get(a) {
        Some(attr) => match &attr.data {
            AttrData::Vlen(items) => Some(items),
            AttrData::Fixed(_) | AttrData::References(_) => None,
        },
        None => match &obj.kind {
            Kind::Dataset(d) => match &d.storage {
                Storage::Vlen(items) => Some(items),
                _ => None,
            },
            Kind::Group(_) => None,
        },
    }
}

/// One vlen item by its key.
fn vlen_item(st: &State, (o, a, i): ItemKey) -> &[u8] {
    vlen_items(st, o, a)
        .and_then(|items| items.get(i))
        .map_or(&[], Vec::as_slice)
}

struct Ctx<'s> {
    st: &'s State,
    places: Vec<Place>,
    heap_ids: HeapIds,
    gcol_addrs: Vec<u64>,
}

impl Ctx<'_> {
    /// The header address behind a reference handed out by `object_ref`.
    fn resolve(&self, r: u64) -> Result<u64> {
        // An object written already (sealed): its address.
        if r & REF_TAG != REF_TAG && r < self.st.eoa {
            return Ok(r);
        }
        let index = (r & !REF_TAG) as usize;
        if r & REF_TAG != REF_TAG || index >= self.places.len() {
            return Err(Error::invalid_input(format!(
                "object reference {r:#x} does not come from this file"
            )));
        }
        Ok(self.places[index].header)
    }

    fn messages(&self, o: usize) -> Result<Vec<Message>> {
        let attr_data = |a: usize, attr: &Attr| -> Result<Vec<u8>> {
            Ok(match &attr.data {
                AttrData::Fixed(b) => b.clone(),
                AttrData::Vlen(items) => self.vlen_data(&attr.ty, items, &self.heap_ids[o][a]),
                AttrData::References(refs) => {
                    let mut b = Vec::with_capacity(8 * refs.len());
                    for &r in refs {
                        b.extend_from_slice(&self.resolve(r)?.to_le_bytes());
                    }
                    b
                }
            })
        };
        object_messages(
            &self.st.objects[o],
            &self.places[o],
            self.st.mtime,
            &attr_data,
        )
    }

    /// Vlen elements: sequence length, collection address, object index.
    fn vlen_data(&self, ty: &H5Type, items: &[Vec<u8>], ids: &[Option<(usize, u16)>]) -> Vec<u8> {
        let base = match ty {
            H5Type::VarLen { base } => base.size().max(1),
            _ => 1,
        };
        let mut b = Bytes::default();
        for (item, id) in items.iter().zip(ids) {
            match id {
                Some((c, index)) => {
                    let addr = self.gcol_addrs.get(*c).copied().unwrap_or(UNDEF);
                    b.u32((item.len() / base) as u32)
                        .u64(addr)
                        .u32(u32::from(*index));
                }
                None => {
                    b.u32(0).u64(0).u32(0);
                }
            }
        }
        b.0
    }
}

/// The header messages of `obj` at `place`; `attr_data` gives attribute `a`'s data.
fn object_messages(
    obj: &Object,
    place: &Place,
    mtime: u32,
    attr_data: &dyn Fn(usize, &Attr) -> Result<Vec<u8>>,
) -> Result<Vec<Message>> {
    let mut msgs = Vec::with_capacity(6 + obj.attrs.len());
    match &obj.kind {
        Kind::Group(_) => msgs.push(Message {
            kind: m::msg::SYMBOL_TABLE,
            flags: 0,
            body: m::symbol_table(place.btree_root(), place.heap),
        }),
        Kind::Dataset(d) => {
            msgs.push(Message {
                kind: m::msg::DATASPACE,
                flags: 0,
                body: m::dataspace(&d.dims),
            });
            msgs.push(Message {
                kind: m::msg::DATATYPE,
                flags: m::CONSTANT,
                body: m::datatype(&d.ty)?,
            });
            let chunked = matches!(d.storage, Storage::Chunked { .. });
            msgs.push(Message {
                kind: m::msg::FILL_VALUE,
                flags: m::CONSTANT,
                body: m::fill_value(if chunked { 3 } else { 2 }),
            });
            let layout = match &d.storage {
                Storage::Contiguous { addr, size } => m::layout_contiguous(*addr, *size),
                Storage::References(refs) => {
                    m::layout_contiguous(place.data, 8 * refs.len() as u64)
                }
                Storage::Vlen(items) => m::layout_contiguous(place.data, 16 * items.len() as u64),
                Storage::Chunked { chunk, filters, .. } => {
                    if !filters.is_empty() {
                        msgs.push(Message {
                            kind: m::msg::FILTER_PIPELINE,
                            flags: m::CONSTANT,
                            body: m::filter_pipeline(filters)?,
                        });
                    }
                    m::layout_chunked(place.btree_root(), chunk, d.ty.size() as u32)?
                }
            };
            msgs.push(Message {
                kind: m::msg::LAYOUT,
                flags: 0,
                body: layout,
            });
            msgs.push(Message {
                kind: m::msg::MTIME,
                flags: 0,
                body: m::mtime(mtime),
            });
        }
    }
    for (a, attr) in obj.attrs.iter().enumerate() {
        let data = attr_data(a, attr)?;
        msgs.push(Message {
            kind: m::msg::ATTRIBUTE,
            flags: 0,
            body: m::attribute(
                &attr.name,
                &m::datatype(&attr.ty)?,
                &m::dataspace(&attr.dims),
                &data,
            ),
        });
    }
    Ok(msgs)
}

/// The metadata of a dataset written sealed (its data written, its attributes fixed-size),
/// to go at `start`: its chunk B-tree (chunked data), then its header. Returns the bytes
/// and the header's address.
pub(super) fn sealed(obj: &Object, mtime: u32, start: u64) -> Result<(Vec<u8>, u64)> {
    let mut at = start;
    let mut alloc = |n: u64| {
        let a = at;
        at += n;
        a
    };
    let mut place = Place::default();
    let chunked = match &obj.kind {
        Kind::Dataset(d) => match &d.storage {
            Storage::Chunked { chunk, chunks, .. } if !chunks.is_empty() => {
                Some((chunk, chunks, d.ty.size()))
            }
            _ => None,
        },
        Kind::Group(_) => None,
    };
    if let Some((chunk, chunks, _)) = chunked {
        let node = m::node_size(CHUNK_K, chunk_key_size(chunk.len()));
        place.nodes = level_counts(chunks.len(), 2 * CHUNK_K)
            .into_iter()
            .map(|n| (0..n).map(|_| alloc(node)).collect())
            .collect();
    }
    let fixed = |_: usize, attr: &Attr| match &attr.data {
        AttrData::Fixed(b) => Ok(b.clone()),
        _ => Err(Error::unsupported(
            "vlen and reference attributes of a sealed dataset",
        )),
    };
    let msgs = object_messages(obj, &place, mtime, &fixed)?;
    place.header = alloc(m::object_header_size(&msgs));
    let mut out = Vec::new();
    if let Some((chunk, chunks, elem)) = chunked {
        write_chunk_tree(&place, chunk, chunks, elem, start, &mut out)?;
    }
    expect_at(&out, start, place.header)?;
    m::object_header(&msgs, &mut out)?;
    Ok((out, place.header))
}

/// What [`lay_out`] gives: the metadata block (to be written at `start`), the superblock,
/// and values (address, u64) to write over what a run of links wrote before.
type Laid = (Vec<u8>, Vec<u8>, Vec<(u64, u64)>);

/// Returns the metadata block (to be written at `start`), the superblock and the patches.
pub(super) fn lay_out(st: &State, start: u64) -> Result<Laid> {
    let (heap_ids, collections) = plan_global_heap(st);
    let mut at = start;
    let mut alloc = |n: u64| {
        let a = at;
        at += n;
        a
    };
    let gcol_addrs: Vec<u64> = collections
        .iter()
        .map(|c| alloc(m::gcol_size(c.iter().map(|&k| vlen_item(st, k).len()))))
        .collect();
    let mut ctx = Ctx {
        st,
        places: vec![Place::default(); st.objects.len()],
        heap_ids,
        gcol_addrs,
    };
    // Header sizes do not depend on addresses: measured with the placeholders.
    for o in 0..st.objects.len() {
        let size = m::object_header_size(&ctx.messages(o)?);
        let place = &mut ctx.places[o];
        place.header = alloc(size);
        match &st.objects[o].kind {
            Kind::Group(links) => {
                place.heap = alloc(32);
                match &links.run {
                    // Written already (`State::write_run_heaps`).
                    Some(run) => {
                        let (addr, size) = run.heap.ok_or_else(|| {
                            Error::invalid_input("internal: a run of links without its heap")
                        })?;
                        place.heap_data = addr;
                        place.heap_size = size;
                    }
                    None => {
                        place.heap_size =
                            8 + links.map.keys().map(|k| heap_name_size(k)).sum::<u64>();
                        place.heap_data = alloc(place.heap_size);
                    }
                }
                let (per, fanout) = (2 * GROUP_LEAF_K, 2 * GROUP_NODE_K);
                let before = links.before_run();
                let (low, high) = (
                    before.div_ceil(per),
                    (links.map.len() - before).div_ceil(per),
                );
                let snods = low + high;
                let node = m::node_size(GROUP_NODE_K, 8);
                match links.run.as_deref() {
                    None => {
                        place.nodes = level_counts(snods, fanout)
                            .into_iter()
                            .map(|n| (0..n).map(|_| alloc(node)).collect())
                            .collect();
                    }
                    Some(run) => {
                        // Level 0: the kept names' nodes (before, then after the run's).
                        let kept = low.div_ceil(fanout) + high.div_ceil(fanout);
                        let level0 = kept + run.tree.len();
                        place.nodes = vec![(0..kept).map(|_| alloc(node)).collect()];
                        if level0 > 1 {
                            for n in level_counts(level0, fanout) {
                                place.nodes.push((0..n).map(|_| alloc(node)).collect());
                            }
                        } else {
                            place.root = run.tree.first().map(|t| t.0);
                        }
                    }
                }
                place.snods = (0..snods)
                    .map(|_| alloc(m::snod_size(GROUP_LEAF_K)))
                    .collect();
            }
            Kind::Dataset(d) => match &d.storage {
                Storage::References(refs) => place.data = alloc(8 * refs.len() as u64),
                Storage::Vlen(items) => place.data = alloc(16 * items.len() as u64),
                Storage::Chunked { chunk, chunks, .. } if !chunks.is_empty() => {
                    let node = m::node_size(CHUNK_K, chunk_key_size(chunk.len()));
                    place.nodes = level_counts(chunks.len(), 2 * CHUNK_K)
                        .into_iter()
                        .map(|n| (0..n).map(|_| alloc(node)).collect())
                        .collect();
                }
                _ => {}
            },
        }
    }
    let end = at;
    let mut out = Vec::with_capacity((end - start) as usize);
    let mut patches = Vec::new();
    for (c, objs) in collections.iter().enumerate() {
        let items: Vec<&[u8]> = objs.iter().map(|&k| vlen_item(st, k)).collect();
        expect_at(&out, start, ctx.gcol_addrs[c])?;
        m::global_heap(&items, &mut out);
    }
    for o in 0..st.objects.len() {
        expect_at(&out, start, ctx.places[o].header)?;
        m::object_header(&ctx.messages(o)?, &mut out)?;
        match &st.objects[o].kind {
            Kind::Group(links) => write_group(&ctx, o, links, start, &mut out, &mut patches)?,
            Kind::Dataset(d) => match &d.storage {
                Storage::References(refs) => {
                    expect_at(&out, start, ctx.places[o].data)?;
                    for &r in refs {
                        out.extend_from_slice(&ctx.resolve(r)?.to_le_bytes());
                    }
                }
                Storage::Vlen(items) => {
                    expect_at(&out, start, ctx.places[o].data)?;
                    let ids = &ctx.heap_ids[o][st.objects[o].attrs.len()];
                    out.extend_from_slice(&ctx.vlen_data(&d.ty, items, ids));
                }
                Storage::Chunked { chunk, chunks, .. } if !chunks.is_empty() => {
                    write_chunk_tree(&ctx.places[o], chunk, chunks, d.ty.size(), start, &mut out)?
                }
                _ => {}
            },
        }
    }
    expect_at(&out, start, end)?;
    let root = &ctx.places[0];
    let superblock = superblock(
        st.base,
        st.base + end,
        &Entry {
            name_offset: 0,
            header: root.header,
            group: Some((root.btree_root(), root.heap)),
        },
    );
    Ok((out, superblock, patches))
}

fn expect_at(out: &[u8], start: u64, addr: u64) -> Result<()> {
    if start + out.len() as u64 != addr {
        return Err(Error::invalid_input(format!(
            "native writer layout mismatch at {addr:#x} (internal error)"
        )));
    }
    Ok(())
}

fn superblock(base: u64, eof: u64, root: &Entry) -> Vec<u8> {
    let mut b = Bytes::default();
    b.raw(b"\x89HDF\r\n\x1a\n").raw(&[0, 0, 0, 0, 0, 8, 8, 0]);
    b.u16(GROUP_LEAF_K as u16).u16(GROUP_NODE_K as u16).u32(0);
    // Base address, free-space info (none), end of file (absolute, as libhdf5 records it
    // with a user block), driver info (none).
    b.u64(base).u64(UNDEF).u64(eof).u64(UNDEF);
    b.raw(&m::root_entry(root));
    b.0
}

/// The group's local heap, symbol table nodes and B-tree, at their planned addresses. A run
/// of links written in order (`sealed.rs`) has its nodes and heap data written already: its
/// nodes go between those of the names kept that sort before and after it.
fn write_group(
    ctx: &Ctx<'_>,
    o: usize,
    links: &Links,
    start: u64,
    out: &mut Vec<u8>,
    patches: &mut Vec<(u64, u64)>,
) -> Result<()> {
    let place = &ctx.places[o];
    expect_at(out, start, place.heap)?;
    out.extend_from_slice(&m::local_heap(place.heap_size, place.heap_data));
    let run = links.run.as_deref();
    // The names kept follow the empty name and the run's names in the heap.
    let mut offsets = Vec::with_capacity(links.map.len());
    let mut at = 8 + run.map_or(0, |r| r.names_len);
    for name in links.map.keys() {
        offsets.push(at);
        at += heap_name_size(name);
    }
    if run.is_none() {
        expect_at(out, start, place.heap_data)?;
        let mut heap = Bytes(vec![0u8; 8]);
        for name in links.map.keys() {
            heap.raw(name.as_bytes()).u8(0).pad8();
        }
        out.extend_from_slice(&heap.0);
    }
    let entries: Vec<Entry> = links
        .map
        .values()
        .zip(&offsets)
        .map(|(&link, &name_offset)| match link {
            Link::Object(child) => {
                let p = &ctx.places[child];
                let group = matches!(ctx.st.objects[child].kind, Kind::Group(_))
                    .then(|| (p.btree_root(), p.heap));
                Entry {
                    name_offset,
                    header: p.header,
                    group,
                }
            }
            Link::Written(header) => Entry {
                name_offset,
                header,
                group: None,
            },
        })
        .collect();
    let per_snod = 2 * GROUP_LEAF_K;
    let before = links.before_run();
    // The kept names' nodes (address, heap offset of the node's last name), before and
    // after the run.
    let mut kept_nodes: Vec<(u64, &[Entry])> = Vec::new();
    let mut parts: [Vec<(u64, u64)>; 2] = Default::default();
    let mut snods = place.snods.iter();
    for (leaves, part) in parts
        .iter_mut()
        .zip([&entries[..before], &entries[before..]])
    {
        for chunk in part.chunks(per_snod) {
            let (Some(&addr), Some(last)) = (snods.next(), chunk.last()) else {
                return Err(Error::invalid_input(
                    "internal: symbol table nodes miscounted",
                ));
            };
            leaves.push((addr, last.name_offset));
            kept_nodes.push((addr, chunk));
        }
    }
    match run {
        None => {
            let [leaves, _] = parts;
            // Left key of each node: the last name of the one before ("" for the first).
            let left_keys: Vec<Vec<u8>> = (0..leaves.len())
                .map(|s| {
                    let k = if s == 0 { 0 } else { leaves[s - 1].1 };
                    k.to_le_bytes().to_vec()
                })
                .collect();
            let right = leaves.last().map_or(0, |l| l.1).to_le_bytes().to_vec();
            let addrs: Vec<u64> = leaves.iter().map(|l| l.0).collect();
            let tree = Tree {
                node_type: 0,
                k: GROUP_NODE_K,
                key_size: 8,
                base_level: 0,
            };
            tree.write(&place.nodes, &addrs, &left_keys, &right, start, out)?;
        }
        Some(run) => write_run_tree(place, run, &parts, start, out, patches)?,
    }
    for (addr, chunk) in kept_nodes {
        expect_at(out, start, addr)?;
        m::snod(chunk, GROUP_LEAF_K, out);
    }
    Ok(())
}

/// The B-tree of a group with a run of links: level 0 is the kept names' nodes over their
/// symbol table nodes `parts` (before and after the run) around the run's nodes written
/// already (whose edge siblings and first key are patched), then the levels above.
fn write_run_tree(
    place: &Place,
    run: &Run,
    parts: &[Vec<(u64, u64)>; 2],
    start: u64,
    out: &mut Vec<u8>,
    patches: &mut Vec<(u64, u64)>,
) -> Result<()> {
    let fanout = 2 * GROUP_NODE_K;
    let mut new_nodes = place.nodes.first().into_iter().flatten();
    // Level 0 in name order (address and left key), and the new nodes among it (their
    // index and leaves).
    let mut level0: Vec<(u64, u64)> = Vec::new();
    let mut to_write: Vec<(usize, &[(u64, u64)])> = Vec::new();
    let mut left = 0u64;
    let mut run_first = 0;
    for (p, leaves) in parts.iter().enumerate() {
        if p == 1 {
            run_first = level0.len();
            for (i, &(addr, key)) in run.tree.iter().enumerate() {
                level0.push((addr, if i == 0 { left } else { key }));
            }
            left = run.leaves_left;
        }
        for chunk in leaves.chunks(fanout) {
            let (Some(&addr), Some(last)) = (new_nodes.next(), chunk.last()) else {
                return Err(Error::invalid_input("internal: B-tree nodes miscounted"));
            };
            to_write.push((level0.len(), chunk));
            level0.push((addr, left));
            left = last.1;
        }
    }
    let sibling = |i: Option<usize>| i.and_then(|i| level0.get(i)).map_or(UNDEF, |n| n.0);
    for (i, leaves) in to_write {
        let (addr, key) = level0[i];
        expect_at(out, start, addr)?;
        let node = group_tree_node(
            0,
            sibling(i.checked_sub(1)),
            sibling(Some(i + 1)),
            key,
            leaves,
        );
        out.extend_from_slice(&node);
    }
    // The run's nodes at its edges, written before the kept names' places were known.
    let run_last = run_first + run.tree.len();
    if let (Some(&(first, _)), true) = (run.tree.first(), run_first > 0) {
        patches.push((first + LEFT_SIBLING, sibling(Some(run_first - 1))));
        patches.push((first + FIRST_KEY, level0[run_first].1));
    }
    if let (Some(&(last, _)), Some(next)) = (run.tree.last(), level0.get(run_last)) {
        patches.push((last + RIGHT_SIBLING, next.0));
    }
    if level0.len() > 1 {
        let addrs: Vec<u64> = level0.iter().map(|n| n.0).collect();
        let keys: Vec<Vec<u8>> = level0.iter().map(|n| n.1.to_le_bytes().to_vec()).collect();
        let tree = Tree {
            node_type: 0,
            k: GROUP_NODE_K,
            key_size: 8,
            base_level: 1,
        };
        let levels = place.nodes.get(1..).unwrap_or_default();
        tree.write(levels, &addrs, &keys, &left.to_le_bytes(), start, out)?;
    }
    Ok(())
}

fn chunk_key_size(rank: usize) -> usize {
    8 + 8 * (rank + 1)
}

fn chunk_key(size: u32, offset: &[u64]) -> Vec<u8> {
    let mut b = Bytes::default();
    b.u32(size).u32(0);
    for &o in offset {
        b.u64(o);
    }
    b.u64(0);
    b.0
}

fn write_chunk_tree(
    place: &Place,
    chunk: &[u64],
    chunks: &[ChunkRecord],
    elem: usize,
    start: u64,
    out: &mut Vec<u8>,
) -> Result<()> {
    let keys: Vec<Vec<u8>> = chunks
        .iter()
        .map(|c| chunk_key(c.size, &c.offset))
        .collect();
    let addrs: Vec<u64> = chunks.iter().map(|c| c.addr).collect();
    // The right key: one chunk past the last one in every dimension, element size last.
    let last = chunks.last().map(|c| c.offset.clone()).unwrap_or_default();
    let mut right = Bytes::default();
    right.u32(0).u32(0);
    for (o, c) in last.iter().zip(chunk) {
        right.u64(o + c);
    }
    right.u64(elem as u64);
    let tree = Tree {
        node_type: 1,
        k: CHUNK_K,
        key_size: chunk_key_size(chunk.len()),
        base_level: 0,
    };
    tree.write(&place.nodes, &addrs, &keys, &right.0, start, out)
}

/// A v1 B-tree over `leaves` (symbol table nodes or chunks), packed full, written level by
/// level at the planned node addresses.
struct Tree {
    node_type: u8,
    k: usize,
    key_size: usize,
    /// The level of the first of the levels written (over `leaves`).
    base_level: u8,
}

impl Tree {
    fn write(
        &self,
        levels: &[Vec<u64>],
        leaves: &[u64],
        left_keys: &[Vec<u8>],
        right: &[u8],
        start: u64,
        out: &mut Vec<u8>,
    ) -> Result<()> {
        let fanout = 2 * self.k;
        let mut children: Vec<u64> = leaves.to_vec();
        let mut keys: Vec<Vec<u8>> = left_keys.to_vec();
        for (level, nodes) in levels.iter().enumerate() {
            let mut next_keys = Vec::with_capacity(nodes.len());
            for (n, &addr) in nodes.iter().enumerate() {
                let from = (n * fanout).min(children.len());
                let to = (from + fanout).min(children.len());
                let mut node_keys: Vec<Vec<u8>> = keys[from..to].to_vec();
                node_keys.push(keys.get(to).cloned().unwrap_or_else(|| right.to_vec()));
                next_keys.push(node_keys[0].clone());
                expect_at(out, start, addr)?;
                let node = Node {
                    node_type: self.node_type,
                    level: self.base_level + level as u8,
                    left: if n == 0 { UNDEF } else { nodes[n - 1] },
                    right: nodes.get(n + 1).copied().unwrap_or(UNDEF),
                    keys: &node_keys,
                    children: &children[from..to],
                };
                m::btree_node(&node, self.k, self.key_size, out);
            }
            children = nodes.clone();
            keys = next_keys;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levels_cover_every_leaf() {
        assert_eq!(level_counts(0, 32), vec![1]);
        assert_eq!(level_counts(32, 32), vec![1]);
        assert_eq!(level_counts(33, 32), vec![2, 1]);
        assert_eq!(level_counts(2500, 32), vec![79, 3, 1]);
    }

    #[test]
    fn tiles_are_padded_at_the_edges() {
        // 3x5 bytes, chunks 2x2.
        let data: Vec<u8> = (0..15).collect();
        let g = ChunkGrid::new(&[3, 5], &[2, 2], 1).unwrap();
        assert_eq!(g.count(), 6);
        assert_eq!(g.offset(5), vec![2, 4]);
        assert_eq!(g.tile(&data, &[0, 0]), vec![0, 1, 5, 6]);
        assert_eq!(g.tile(&data, &[0, 4]), vec![4, 0, 9, 0]);
        assert_eq!(g.tile(&data, &[2, 4]), vec![14, 0, 0, 0]);
    }
}
