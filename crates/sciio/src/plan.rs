//! What a conversion carries and what it leaves out.
//!
//! A conversion walks the source once against what the destination can hold: every item (a
//! node, an npz member, a MAT variable, an attribute, a column) is either carried losslessly or
//! left out with a reason ([`LeftOut`]). Left-out items never stop a conversion; they are listed
//! in [`ConvertSummary::left_out`](crate::ConvertSummary::left_out), and
//! [`summary_lines`] groups them for display. With
//! [`ConvertOptions::strict`](crate::ConvertOptions::strict) any left-out item is an error raised
//! before anything is written. A changed value, a dropped row or a narrowed type is never a
//! left-out item: those are errors.

use std::fmt;
use std::path::Path;

use sciio_core::{Error, ErrorKind, Result};

/// What kind of source item a [`LeftOut`] is.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Item {
    /// A user attribute of the node, by name.
    Attribute(String),
    /// The node itself (an HDF5 node, an npz member, a MAT variable), described:
    /// `a link to /x`, `a VLArray (...)`.
    Node(String),
    /// A column of the frame or table (a record field), by label, with its type.
    Column {
        /// The column label (a field name; nested fields as `a.b`).
        label: String,
        /// Its type, as the source describes it.
        description: String,
    },
}

/// One source item a conversion did not carry, and why.
///
/// ```
/// use sciio::plan::{summary_lines, LeftOut};
/// let items = vec![
///     LeftOut::attribute("/a", "units", "npz holds no attributes"),
///     LeftOut::attribute("/b", "units", "npz holds no attributes"),
///     LeftOut::attribute("/b", "scale", "npz holds no attributes"),
///     LeftOut::node("/vl", "a VLArray", "sciio cannot read it yet"),
/// ];
/// assert_eq!(items[3].to_string(), "/vl (a VLArray; sciio cannot read it yet)");
/// assert_eq!(
///     summary_lines(&items),
///     [
///         "left out: 3 attributes on 2 nodes (npz holds no attributes)",
///         "left out: /vl (a VLArray; sciio cannot read it yet)",
///     ]
/// );
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LeftOut {
    /// The path of the node in the source (`/`, `/group/x`, an npz member `/x`); for an
    /// attribute or a column, the node holding it.
    pub path: String,
    /// What was left out.
    pub what: Item,
    /// Why the destination does not hold it.
    pub reason: String,
}

impl LeftOut {
    /// The attribute `name` of the node at `path`.
    pub fn attribute(
        path: impl Into<String>,
        name: impl Into<String>,
        reason: impl Into<String>,
    ) -> LeftOut {
        LeftOut {
            path: path.into(),
            what: Item::Attribute(name.into()),
            reason: reason.into(),
        }
    }

    /// The node at `path`, described (`a link to /x`).
    pub fn node(
        path: impl Into<String>,
        description: impl Into<String>,
        reason: impl Into<String>,
    ) -> LeftOut {
        LeftOut {
            path: path.into(),
            what: Item::Node(description.into()),
            reason: reason.into(),
        }
    }

    /// The column `label` (of type `description`) of the frame or table at `path`.
    pub fn column(
        path: impl Into<String>,
        label: impl Into<String>,
        description: impl Into<String>,
        reason: impl Into<String>,
    ) -> LeftOut {
        LeftOut {
            path: path.into(),
            what: Item::Column {
                label: label.into(),
                description: description.into(),
            },
            reason: reason.into(),
        }
    }
}

impl fmt::Display for LeftOut {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.what {
            Item::Attribute(name) => {
                write!(f, "attribute '{name}' of {} ({})", self.path, self.reason)
            }
            Item::Node(description) => write!(f, "{} ({description}; {})", self.path, self.reason),
            Item::Column { label, description } => write!(
                f,
                "column '{label}' of {} ({description}; {})",
                self.path, self.reason
            ),
        }
    }
}

/// Items listed one by one per reason before a group is counted instead.
const LISTED: usize = 3;

/// The left-out items as short lines for a person, in order of first appearance: attributes
/// counted per reason (`left out: 14 attributes on 5 nodes (npz holds no attributes)`), nodes
/// and columns one line each (`left out: /x/vl (a VLArray; ...)`), or counted with the first
/// few named when more than three share a reason (links with their targets: `/l -> /x`).
pub fn summary_lines(items: &[LeftOut]) -> Vec<String> {
    let mut groups: Vec<(GroupKey, Vec<&LeftOut>)> = Vec::new();
    for item in items {
        let key = GroupKey::of(item);
        match groups.iter_mut().find(|(k, _)| *k == key) {
            Some((_, members)) => members.push(item),
            None => groups.push((key, vec![item])),
        }
    }
    groups
        .iter()
        .flat_map(|(key, members)| group_lines(key, members))
        .collect()
}

#[derive(Debug, PartialEq, Eq)]
enum GroupKey {
    Attributes(String),
    Nodes(String),
    Columns(String, String),
}

impl GroupKey {
    fn of(item: &LeftOut) -> GroupKey {
        let reason = item.reason.clone();
        match item.what {
            Item::Attribute(_) => GroupKey::Attributes(reason),
            Item::Node(_) => GroupKey::Nodes(reason),
            Item::Column { .. } => GroupKey::Columns(item.path.clone(), reason),
        }
    }
}

fn group_lines(key: &GroupKey, members: &[&LeftOut]) -> Vec<String> {
    match key {
        GroupKey::Attributes(reason) => {
            let mut nodes: Vec<&str> = members.iter().map(|m| m.path.as_str()).collect();
            nodes.dedup();
            vec![format!(
                "left out: {} on {} ({reason})",
                counted(members.len(), "attribute"),
                counted(nodes.len(), "node")
            )]
        }
        _ if members.len() <= LISTED => members.iter().map(|m| format!("left out: {m}")).collect(),
        GroupKey::Nodes(reason) => vec![format!(
            "left out: {} ({}, ...; {reason})",
            counted(members.len(), "node"),
            first_names(members, |m| match &m.what {
                // A link names its target: `/l -> /x`.
                Item::Node(d) => match d.strip_prefix("a link to ") {
                    Some(target) => format!("{} -> {target}", m.path),
                    None => m.path.clone(),
                },
                _ => m.path.clone(),
            })
        )],
        GroupKey::Columns(path, reason) => vec![format!(
            "left out: {} of {path} ({}, ...; {reason})",
            counted(members.len(), "column"),
            first_names(members, |m| match &m.what {
                Item::Column { label, .. } => format!("'{label}'"),
                _ => String::new(),
            })
        )],
    }
}

fn first_names(members: &[&LeftOut], name: impl Fn(&LeftOut) -> String) -> String {
    members
        .iter()
        .take(LISTED)
        .map(|m| name(m))
        .collect::<Vec<_>>()
        .join(", ")
}

fn counted(n: usize, noun: &str) -> String {
    format!("{n} {noun}{}", if n == 1 { "" } else { "s" })
}

/// With `strict`, any left-out item is a [`Refused`](ErrorKind::Refused) error naming the
/// first one and how many there are; called before anything is written.
pub(crate) fn refuse_if_strict(left_out: &[LeftOut], strict: bool, dst: &Path) -> Result<()> {
    let Some(first) = left_out.first().filter(|_| strict) else {
        return Ok(());
    };
    let more = match left_out.len() {
        1 => String::new(),
        n => format!(" and {} more", n - 1),
    };
    Err(Error::new(
        ErrorKind::Refused,
        format!("--strict: the conversion would leave out {first}{more}; nothing was written"),
    )
    .with_file(dst))
}

/// The plan of one conversion, which every route reports into: the source items left out so
/// far ([`LeftOut`], in source order) and whether `--strict` refuses them. A route adds what
/// it leaves out and calls [`Plan::ready`] before it writes anything; the items become
/// [`ConvertSummary::left_out`](crate::ConvertSummary::left_out).
#[derive(Debug)]
pub(crate) struct Plan {
    /// What is left out so far.
    pub(crate) left_out: Vec<LeftOut>,
    strict: bool,
    dst: std::path::PathBuf,
}

impl Plan {
    /// An empty plan for writing `dst` (`strict`: any left-out item is refused).
    pub(crate) fn new(strict: bool, dst: &Path) -> Plan {
        Plan {
            left_out: Vec::new(),
            strict,
            dst: dst.to_path_buf(),
        }
    }

    /// Whether `--strict` refuses any left-out item.
    #[cfg_attr(not(feature = "hdfstore"), allow(dead_code))]
    pub(crate) fn strict(&self) -> bool {
        self.strict
    }

    /// Adds left-out items.
    pub(crate) fn extend(&mut self, items: impl IntoIterator<Item = LeftOut>) {
        self.left_out.extend(items);
    }

    /// Called by a route before it writes anything: with `--strict`, any left-out item is a
    /// [`Refused`](ErrorKind::Refused) error ([`refuse_if_strict`]).
    pub(crate) fn ready(&self) -> Result<()> {
        refuse_if_strict(&self.left_out, self.strict, &self.dst)
    }
}

/// Why `format` leaves attributes out (an `.h5` file takes them only as a copy of one HDF5
/// file, like `ptrepack`).
pub(crate) fn no_attributes(format: crate::Format) -> String {
    not_held("attributes", format)
}

/// Why `format` leaves links out (as for attributes).
pub(crate) fn no_links(format: crate::Format) -> String {
    not_held("links", format)
}

fn not_held(what: &str, format: crate::Format) -> String {
    match format {
        crate::Format::Hdf5 => format!("{what} reach an .h5 file only in a copy of one HDF5 file"),
        other => format!("{other} holds no {what}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn many_nodes_of_one_reason_are_counted() {
        let items: Vec<LeftOut> = (0..5)
            .map(|i| LeftOut::node(format!("/l{i}"), "a link to /x", "npz holds no links"))
            .collect();
        assert_eq!(
            summary_lines(&items),
            ["left out: 5 nodes (/l0 -> /x, /l1 -> /x, /l2 -> /x, ...; npz holds no links)"]
        );
    }

    #[test]
    fn columns_group_by_frame_and_reason() {
        let items = vec![
            LeftOut::column("/", "a", "object", "numpy has no type for it"),
            LeftOut::column("/", "b", "object", "numpy has no type for it"),
        ];
        assert_eq!(
            summary_lines(&items),
            [
                "left out: column 'a' of / (object; numpy has no type for it)",
                "left out: column 'b' of / (object; numpy has no type for it)",
            ]
        );
    }

    #[test]
    fn strict_refuses_before_writing_and_names_the_first_item() {
        let dst = Path::new("out.npz");
        let items = vec![
            LeftOut::attribute("/x", "units", "npz holds no attributes"),
            LeftOut::attribute("/y", "units", "npz holds no attributes"),
        ];
        assert!(refuse_if_strict(&items, false, dst).is_ok());
        assert!(refuse_if_strict(&[], true, dst).is_ok());
        let err = refuse_if_strict(&items, true, dst).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Refused);
        assert!(
            err.to_string()
                .contains("attribute 'units' of /x (npz holds no attributes) and 1 more"),
            "{err}"
        );
    }
}
