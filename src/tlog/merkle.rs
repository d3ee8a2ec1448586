//! RFC 9162 (§2.1) Merkle tree hashing and proofs over SHA-256, the tree every C2SP
//! `tlog-checkpoint` names (RFC 6962 hashing, which RFC 9162 keeps unchanged).
//!
//! - Leaf hash `H(0x00 || data)`, interior node `H(0x01 || left || right)`, empty tree
//!   `H("")`.
//! - A tree of `n` leaves splits at `k`, the largest power of two below `n`.
//! - Nodes are addressed as complete subtrees: `(level, index)` covers leaves
//!   `[index·2^level, (index+1)·2^level)`. [`Nodes`] reads them from wherever they live (the
//!   store's `world_merkle` table, or memory); proofs and roots need only complete subtrees,
//!   because every range the RFC's recursion names starts at a multiple of the largest power
//!   of two not above its length.
//! - [`stored_index`] orders nodes as they complete while leaves are appended (leaf `n`, then
//!   the subtrees leaf `n` completes, lowest first): the order the store appends them in, so a
//!   table keyed by it grows at its end and is read back in one pass.
//!
//! Verification follows RFC 9162 §2.1.3.2 (inclusion) and §2.1.4.2 (consistency) step by
//! step; it never reads a store.

use sha2::{Digest, Sha256};

/// A SHA-256 node or leaf hash.
pub type Hash = [u8; 32];

/// The root of the empty tree: `SHA-256("")`.
pub const EMPTY_ROOT: Hash = [
    0xe3, 0xb0, 0xc4, 0x42, 0x98, 0xfc, 0x1c, 0x14, 0x9a, 0xfb, 0xf4, 0xc8, 0x99, 0x6f, 0xb9, 0x24,
    0x27, 0xae, 0x41, 0xe4, 0x64, 0x9b, 0x93, 0x4c, 0xa4, 0x95, 0x99, 0x1b, 0x78, 0x52, 0xb8, 0x55,
];

/// `H(0x00 || data)`: the hash of one leaf.
pub fn leaf_hash(data: &[u8]) -> Hash {
    let mut h = Sha256::new();
    h.update([0u8]);
    h.update(data);
    h.finalize().into()
}

/// `H(0x01 || left || right)`: the hash of an interior node.
pub fn node_hash(left: &Hash, right: &Hash) -> Hash {
    let mut h = Sha256::new();
    h.update([1u8]);
    h.update(left);
    h.update(right);
    h.finalize().into()
}

/// The position of node `(level, index)` in append order (module docs): leaf `n` is written
/// after every node of leaves `< n`, and the subtrees it completes follow it.
pub fn stored_index(level: u32, index: u64) -> u64 {
    // The node's rightmost leaf is `(index + 1)·2^level − 1`; everything stored before that
    // leaf is `sum_{k≥0} leaf >> k` (each leaf `m` adds itself and the subtrees it completes:
    // one per trailing one bit of `m`), and the node follows `level` nodes later.
    let last = ((index + 1) << level) - 1;
    let mut before = 0u64;
    let mut m = last;
    while m > 0 {
        before += m;
        m >>= 1;
    }
    before + u64::from(level)
}

/// How many nodes a tree of `n` leaves stores (leaves and complete subtrees).
pub fn stored_count(n: u64) -> u64 {
    if n == 0 {
        return 0;
    }
    // Up to and including leaf n−1, then the subtrees it completes.
    stored_index(0, n - 1) + 1 + u64::from((n - 1).trailing_ones())
}

/// Where complete-subtree hashes come from.
pub trait Nodes {
    /// The reader's error.
    type Error;
    /// The hash of the complete subtree `(level, index)` (leaves `[index·2^level,
    /// (index+1)·2^level)`); the caller asks only for subtrees inside the tree it works on.
    ///
    /// # Errors
    /// The reader's own (a missing or unreadable node).
    fn node(&mut self, level: u32, index: u64) -> Result<Hash, Self::Error>;
}

/// `MTH(D[lo:hi])` for a range the RFC's recursion names (`lo` a multiple of the largest power
/// of two not above `hi − lo`), folded from its complete subtrees. `lo == hi` is the empty tree.
///
/// # Errors
/// The reader's.
pub fn range_hash<N: Nodes>(nodes: &mut N, lo: u64, hi: u64) -> Result<Hash, N::Error> {
    if lo >= hi {
        return Ok(EMPTY_ROOT);
    }
    let mut parts: Vec<Hash> = Vec::new();
    let mut at = lo;
    let len = hi - lo;
    for level in (0..64u32).rev() {
        let size = 1u64 << level;
        if len & size != 0 {
            parts.push(nodes.node(level, at >> level)?);
            at += size;
        }
    }
    let mut acc = parts.pop().unwrap_or(EMPTY_ROOT);
    while let Some(left) = parts.pop() {
        acc = node_hash(&left, &acc);
    }
    Ok(acc)
}

/// The root of the tree of the first `size` leaves.
///
/// # Errors
/// The reader's.
pub fn root<N: Nodes>(nodes: &mut N, size: u64) -> Result<Hash, N::Error> {
    range_hash(nodes, 0, size)
}

/// The largest power of two strictly below `n` (`n ≥ 2`).
fn split(n: u64) -> u64 {
    1u64 << (63 - (n - 1).leading_zeros())
}

/// Why a proof cannot be made or does not verify.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ProofError {
    /// The index or sizes are outside the tree.
    #[error("{0}")]
    Range(String),
    /// The proof has the wrong number of hashes for these sizes.
    #[error("the proof has {got} hashes; {want} expected for these sizes")]
    Length {
        /// Hashes given.
        got: usize,
        /// Hashes the sizes call for.
        want: usize,
    },
    /// The hashes do not lead to the root.
    #[error("{0}")]
    Mismatch(String),
}

/// The audit path of leaf `index` in the tree of `size` leaves (RFC 9162 §2.1.3.1), leaf's
/// sibling first.
///
/// # Errors
/// [`ProofError::Range`] wrapped as `Ok(Err(..))` when `index ≥ size`; the reader's errors.
pub fn inclusion_proof<N: Nodes>(
    nodes: &mut N,
    index: u64,
    size: u64,
) -> Result<Result<Vec<Hash>, ProofError>, N::Error> {
    if index >= size {
        return Ok(Err(ProofError::Range(format!(
            "leaf {index} is not in a tree of {size} leaves"
        ))));
    }
    let mut out = Vec::new();
    path(nodes, index, 0, size, &mut out)?;
    Ok(Ok(out))
}

fn path<N: Nodes>(
    nodes: &mut N,
    m: u64,
    lo: u64,
    hi: u64,
    out: &mut Vec<Hash>,
) -> Result<(), N::Error> {
    let n = hi - lo;
    if n <= 1 {
        return Ok(());
    }
    let k = split(n);
    if m < k {
        path(nodes, m, lo, lo + k, out)?;
        out.push(range_hash(nodes, lo + k, hi)?);
    } else {
        path(nodes, m - k, lo + k, hi, out)?;
        out.push(range_hash(nodes, lo, lo + k)?);
    }
    Ok(())
}

/// The consistency proof from the tree of `old` leaves to the tree of `new` leaves (RFC 9162
/// §2.1.4.1); empty when `old` is 0 or equal to `new`.
///
/// # Errors
/// [`ProofError::Range`] (as `Ok(Err(..))`) when `old > new`; the reader's errors.
pub fn consistency_proof<N: Nodes>(
    nodes: &mut N,
    old: u64,
    new: u64,
) -> Result<Result<Vec<Hash>, ProofError>, N::Error> {
    if old > new {
        return Ok(Err(ProofError::Range(format!(
            "a tree of {old} leaves cannot be a prefix of one of {new}"
        ))));
    }
    let mut out = Vec::new();
    if old > 0 && old < new {
        subproof(nodes, old, 0, new, true, &mut out)?;
    }
    Ok(Ok(out))
}

fn subproof<N: Nodes>(
    nodes: &mut N,
    m: u64,
    lo: u64,
    hi: u64,
    whole: bool,
    out: &mut Vec<Hash>,
) -> Result<(), N::Error> {
    let n = hi - lo;
    if m == n {
        if !whole {
            out.push(range_hash(nodes, lo, hi)?);
        }
        return Ok(());
    }
    let k = split(n);
    if m <= k {
        subproof(nodes, m, lo, lo + k, whole, out)?;
        out.push(range_hash(nodes, lo + k, hi)?);
    } else {
        subproof(nodes, m - k, lo + k, hi, false, out)?;
        out.push(range_hash(nodes, lo, lo + k)?);
    }
    Ok(())
}

/// The root an inclusion proof leads to (RFC 9162 §2.1.3.2, steps 1–4 and the `sn` check of
/// step 5).
///
/// # Errors
/// [`ProofError::Range`] for `index ≥ size`; [`ProofError::Length`] when the path does not fit
/// the sizes.
pub fn root_from_inclusion(
    index: u64,
    size: u64,
    leaf: &Hash,
    proof: &[Hash],
) -> Result<Hash, ProofError> {
    if index >= size {
        return Err(ProofError::Range(format!(
            "leaf {index} is not in a tree of {size} leaves"
        )));
    }
    let (mut f, mut s) = (index, size - 1);
    let mut r = *leaf;
    for p in proof {
        if s == 0 {
            return Err(ProofError::Length {
                got: proof.len(),
                want: inclusion_len(index, size),
            });
        }
        if f & 1 == 1 || f == s {
            r = node_hash(p, &r);
            if f & 1 == 0 {
                while f & 1 == 0 && f != 0 {
                    f >>= 1;
                    s >>= 1;
                }
            }
        } else {
            r = node_hash(&r, p);
        }
        f >>= 1;
        s >>= 1;
    }
    if s != 0 {
        return Err(ProofError::Length {
            got: proof.len(),
            want: inclusion_len(index, size),
        });
    }
    Ok(r)
}

/// The number of hashes in the audit path of `index` in a tree of `size` (for messages).
fn inclusion_len(index: u64, size: u64) -> usize {
    let (mut n, mut lo, mut hi, mut len) = (index, 0u64, size, 0usize);
    while hi - lo > 1 {
        let k = split(hi - lo);
        if n < k {
            hi = lo + k;
        } else {
            lo += k;
            n -= k;
        }
        len += 1;
    }
    len
}

/// Check that `leaf` is leaf `index` of the tree of `size` leaves whose root is `root`
/// (RFC 9162 §2.1.3.2).
///
/// # Errors
/// [`ProofError`] naming what failed.
pub fn verify_inclusion(
    index: u64,
    size: u64,
    leaf: &Hash,
    proof: &[Hash],
    root: &Hash,
) -> Result<(), ProofError> {
    let got = root_from_inclusion(index, size, leaf, proof)?;
    if got != *root {
        return Err(ProofError::Mismatch(format!(
            "the inclusion proof of leaf {index} leads to root {}, not the tree's {}",
            hex::encode(got),
            hex::encode(root)
        )));
    }
    Ok(())
}

/// Check that the tree of `old` leaves with root `old_root` is a prefix of the tree of `new`
/// leaves with root `new_root` (RFC 9162 §2.1.4.2; equal sizes need equal roots and an empty
/// proof, an empty old tree an empty proof).
///
/// # Errors
/// [`ProofError`] naming what failed.
pub fn verify_consistency(
    old: u64,
    new: u64,
    old_root: &Hash,
    new_root: &Hash,
    proof: &[Hash],
) -> Result<(), ProofError> {
    if old > new {
        return Err(ProofError::Range(format!(
            "a tree of {old} leaves cannot be a prefix of one of {new}"
        )));
    }
    if old == new {
        if !proof.is_empty() {
            return Err(ProofError::Length {
                got: proof.len(),
                want: 0,
            });
        }
        if old_root != new_root {
            return Err(ProofError::Mismatch(format!(
                "two trees of {old} leaves with different roots ({} and {}): a fork",
                hex::encode(old_root),
                hex::encode(new_root)
            )));
        }
        return Ok(());
    }
    if old == 0 {
        if !proof.is_empty() {
            return Err(ProofError::Length {
                got: proof.len(),
                want: 0,
            });
        }
        return Ok(());
    }
    // Step 1.
    if proof.is_empty() {
        return Err(ProofError::Length { got: 0, want: 1 });
    }
    // Step 2: a power-of-two old tree is itself the first node.
    let mut path: Vec<Hash> = Vec::with_capacity(proof.len() + 1);
    if old.is_power_of_two() {
        path.push(*old_root);
    }
    path.extend_from_slice(proof);
    // Steps 3–4.
    let (mut f, mut s) = (old - 1, new - 1);
    while f & 1 == 1 {
        f >>= 1;
        s >>= 1;
    }
    // Step 5.
    let (mut fr, mut sr) = (path[0], path[0]);
    // Step 6.
    for c in &path[1..] {
        if s == 0 {
            return Err(ProofError::Mismatch(format!(
                "the consistency proof from {old} to {new} leaves is too long"
            )));
        }
        if f & 1 == 1 || f == s {
            fr = node_hash(c, &fr);
            sr = node_hash(c, &sr);
            if f & 1 == 0 {
                while f & 1 == 0 && f != 0 {
                    f >>= 1;
                    s >>= 1;
                }
            }
        } else {
            sr = node_hash(&sr, c);
        }
        f >>= 1;
        s >>= 1;
    }
    // Step 7.
    if s != 0 {
        return Err(ProofError::Mismatch(format!(
            "the consistency proof from {old} to {new} leaves is too short"
        )));
    }
    if fr != *old_root {
        return Err(ProofError::Mismatch(format!(
            "the tree of {old} leaves is not a prefix of the tree of {new}: the proof gives old root {}, the checkpoint says {}",
            hex::encode(fr),
            hex::encode(old_root)
        )));
    }
    if sr != *new_root {
        return Err(ProofError::Mismatch(format!(
            "the consistency proof leads to new root {}, not {}",
            hex::encode(sr),
            hex::encode(new_root)
        )));
    }
    Ok(())
}

/// A tree built leaf by leaf in memory, keeping only its right edge (at most one complete
/// subtree per level): the root of every prefix in one pass, and each complete subtree as it
/// completes, in [`stored_index`] order.
#[derive(Clone, Debug, Default)]
pub struct Builder {
    /// Complete subtrees of the right edge, `(level, hash)`, highest level first.
    edge: Vec<(u32, Hash)>,
    size: u64,
}

impl Builder {
    /// An empty tree.
    pub fn new() -> Builder {
        Builder::default()
    }

    /// Leaves so far.
    pub fn size(&self) -> u64 {
        self.size
    }

    /// Append leaf `hash`; `completed((level, index), hash)` is called for the leaf and for
    /// each subtree it completes, lowest first (append order).
    pub fn push(&mut self, hash: Hash, mut completed: impl FnMut((u32, u64), &Hash)) {
        let n = self.size;
        completed((0, n), &hash);
        let mut cur = (0u32, hash);
        while let Some(&(level, left)) = self.edge.last() {
            if level != cur.0 {
                break;
            }
            self.edge.pop();
            let up = (level + 1, node_hash(&left, &cur.1));
            completed((up.0, n >> up.0), &up.1);
            cur = up;
        }
        self.edge.push(cur);
        self.size += 1;
    }

    /// The root of the tree so far.
    pub fn root(&self) -> Hash {
        let mut it = self.edge.iter().rev();
        let Some(&(_, mut acc)) = it.next() else {
            return EMPTY_ROOT;
        };
        for (_, left) in it {
            acc = node_hash(left, &acc);
        }
        acc
    }
}

/// Complete-subtree hashes kept in memory in [`stored_index`] order (tests, small trees).
#[derive(Clone, Debug, Default)]
pub struct MemoryTree {
    builder: Builder,
    stored: Vec<Hash>,
}

impl MemoryTree {
    /// A tree of these leaf hashes.
    pub fn from_leaves(leaves: impl IntoIterator<Item = Hash>) -> MemoryTree {
        let mut t = MemoryTree::default();
        for l in leaves {
            t.push(l);
        }
        t
    }

    /// Append one leaf hash.
    pub fn push(&mut self, leaf: Hash) {
        let stored = &mut self.stored;
        self.builder.push(leaf, |_, h| stored.push(*h));
    }

    /// Leaves so far.
    pub fn size(&self) -> u64 {
        self.builder.size()
    }

    /// The root of the whole tree.
    pub fn root(&self) -> Hash {
        self.builder.root()
    }
}

/// A node [`MemoryTree`] does not hold.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("no node at level {0}, index {1}")]
pub struct NoNode(pub u32, pub u64);

impl Nodes for MemoryTree {
    type Error = NoNode;
    fn node(&mut self, level: u32, index: u64) -> Result<Hash, NoNode> {
        usize::try_from(stored_index(level, index))
            .ok()
            .and_then(|i| self.stored.get(i))
            .copied()
            .ok_or(NoNode(level, index))
    }
}

#[cfg(test)]
mod tests {
    //! Vectors: the RFC 6962 test tree of transparency-dev/merkle (`testonly/constants.go`,
    //! `proof/verify_test.go`, Apache-2.0, Google LLC) — eight leaves, their node hashes,
    //! every root, and known inclusion and consistency proofs. Reproduced as data.

    use super::*;

    fn h(s: &str) -> Hash {
        let v = hex::decode(s).expect("hex");
        v.try_into().expect("32 bytes")
    }

    fn leaves() -> Vec<Vec<u8>> {
        [
            "",
            "00",
            "10",
            "2021",
            "3031",
            "40414243",
            "5051525354555657",
            "606162636465666768696a6b6c6d6e6f",
        ]
        .iter()
        .map(|s| hex::decode(s).expect("hex"))
        .collect()
    }

    /// Roots by tree size 1..=8.
    const ROOTS: [&str; 8] = [
        "6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d",
        "fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125",
        "aeb6bcfe274b70a14fb067a5e5578264db0fa9b51af5e0ba159158f329e06e77",
        "d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7",
        "4e3bbb1f7b478dcfe71fb631631519a3bca12c9aefca1612bfce4c13a86264d4",
        "76e67dadbcdf1e10e1b74ddc608abd2f98dfb16fbce75277b5232a127f2087ef",
        "ddb89be403809e325750d3d263cd78929c2942b7942a34b77e122c9594a74c8c",
        "5dc9da79a70659a9ad559cb701ded9a2ab9d823aad2f4960cfe370eff4604328",
    ];

    fn tree(n: usize) -> MemoryTree {
        MemoryTree::from_leaves(leaves().iter().take(n).map(|l| leaf_hash(l)))
    }

    /// (leaf index 0-based, tree size, proof)
    fn inclusion_vectors() -> Vec<(u64, u64, Vec<Hash>)> {
        vec![
            (0, 1, vec![]),
            (
                0,
                8,
                vec![
                    h("96a296d224f285c67bee93c30f8a309157f0daa35dc5b87e410b78630a09cfc7"),
                    h("5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e"),
                    h("6b47aaf29ee3c2af9af889bc1fb9254dabd31177f16232dd6aab035ca39bf6e4"),
                ],
            ),
            (
                5,
                8,
                vec![
                    h("bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b"),
                    h("ca854ea128ed050b41b35ffc1b87b8eb2bde461e9e3b5596ece6b9d5975a0ae0"),
                    h("d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7"),
                ],
            ),
            (
                2,
                3,
                vec![h(
                    "fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125",
                )],
            ),
            (
                1,
                5,
                vec![
                    h("6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d"),
                    h("5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e"),
                    h("bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b"),
                ],
            ),
        ]
    }

    /// (old size, new size, proof)
    fn consistency_vectors() -> Vec<(u64, u64, Vec<Hash>)> {
        vec![
            (1, 1, vec![]),
            (
                1,
                8,
                vec![
                    h("96a296d224f285c67bee93c30f8a309157f0daa35dc5b87e410b78630a09cfc7"),
                    h("5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e"),
                    h("6b47aaf29ee3c2af9af889bc1fb9254dabd31177f16232dd6aab035ca39bf6e4"),
                ],
            ),
            (
                6,
                8,
                vec![
                    h("0ebc5d3437fbe2db158b9f126a1d118e308181031d0a949f8dededebc558ef6a"),
                    h("ca854ea128ed050b41b35ffc1b87b8eb2bde461e9e3b5596ece6b9d5975a0ae0"),
                    h("d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7"),
                ],
            ),
            (
                2,
                5,
                vec![
                    h("5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e"),
                    h("bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b"),
                ],
            ),
            (
                6,
                7,
                vec![
                    h("0ebc5d3437fbe2db158b9f126a1d118e308181031d0a949f8dededebc558ef6a"),
                    h("b08693ec2e721597130641e8211e7eedccb4c26413963eee6c1e2ed16ffb1a5f"),
                    h("d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7"),
                ],
            ),
        ]
    }

    #[test]
    fn roots_match_the_vectors() {
        assert_eq!(tree(0).root(), EMPTY_ROOT);
        assert_eq!(
            hex::encode(EMPTY_ROOT),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        );
        for (i, want) in ROOTS.iter().enumerate() {
            let mut t = tree(8);
            assert_eq!(
                tree(i + 1).root(),
                h(want),
                "builder root of size {}",
                i + 1
            );
            assert_eq!(
                root(&mut t, i as u64 + 1),
                Ok(h(want)),
                "stored-node root of size {}",
                i + 1
            );
        }
    }

    #[test]
    fn node_hashes_match_the_vectors() {
        let mut t = tree(8);
        assert_eq!(
            t.node(0, 1),
            Ok(h(
                "96a296d224f285c67bee93c30f8a309157f0daa35dc5b87e410b78630a09cfc7"
            ))
        );
        assert_eq!(
            t.node(1, 3),
            Ok(h(
                "ca854ea128ed050b41b35ffc1b87b8eb2bde461e9e3b5596ece6b9d5975a0ae0"
            ))
        );
        assert_eq!(
            t.node(2, 1),
            Ok(h(
                "6b47aaf29ee3c2af9af889bc1fb9254dabd31177f16232dd6aab035ca39bf6e4"
            ))
        );
        assert_eq!(t.node(3, 0), Ok(h(ROOTS[7])));
    }

    #[test]
    fn stored_indexes_are_append_order() {
        let mut order = Vec::new();
        let mut b = Builder::new();
        for i in 0..100u64 {
            b.push([i as u8; 32], |(l, n), _| order.push(stored_index(l, n)));
        }
        assert_eq!(order, (0..order.len() as u64).collect::<Vec<_>>());
        for n in 0..=100 {
            let mut b = Builder::new();
            let mut count = 0;
            for i in 0..n {
                b.push([i as u8; 32], |_, _| count += 1);
            }
            assert_eq!(stored_count(n), count, "size {n}");
        }
    }

    #[test]
    fn inclusion_proofs_match_the_vectors_and_verify() {
        for (index, size, want) in inclusion_vectors() {
            let mut t = tree(8);
            let got = inclusion_proof(&mut t, index, size)
                .expect("nodes")
                .expect("range");
            assert_eq!(got, want, "proof of {index} in {size}");
            let leaf = leaf_hash(&leaves()[index as usize]);
            let root_h = h(ROOTS[size as usize - 1]);
            verify_inclusion(index, size, &leaf, &want, &root_h).expect("verifies");
        }
    }

    /// The probes of transparency-dev's `corruptInclusionProof`: each must fail.
    #[test]
    fn corrupted_inclusion_proofs_fail() {
        let some = h("abacaba000000000000000000000000000000000000000000060061e00123456");
        for (index, size, proof) in inclusion_vectors().into_iter().filter(|v| v.1 > 1) {
            let leaf = leaf_hash(&leaves()[index as usize]);
            let r = h(ROOTS[size as usize - 1]);
            let mut bad: Vec<(u64, u64, Hash, Hash, Vec<Hash>)> = vec![
                (index.wrapping_sub(1), size, leaf, r, proof.clone()),
                (index + 1, size, leaf, r, proof.clone()),
                (index ^ 2, size, leaf, r, proof.clone()),
                (index, size * 2, leaf, r, proof.clone()),
                (index, size / 2, leaf, r, proof.clone()),
                (index, size, leaf_hash(b"WrongLeaf"), r, proof.clone()),
                (index, size, leaf, EMPTY_ROOT, proof.clone()),
                (index, size, leaf, some, proof.clone()),
                (index, size, leaf, r, [proof.clone(), vec![r]].concat()),
                (index, size, leaf, r, [vec![r], proof.clone()].concat()),
                (index, size, leaf, r, proof[..proof.len() - 1].to_vec()),
            ];
            for i in 0..proof.len() {
                let mut p = proof.clone();
                p[i][0] ^= 8;
                bad.push((index, size, leaf, r, p));
            }
            if proof.len() > 1 {
                let mut p = vec![proof[0], some];
                p.extend_from_slice(&proof[1..]);
                bad.push((index, size, leaf, r, p));
            }
            for (i, s, l, rt, p) in bad {
                assert!(
                    verify_inclusion(i, s, &l, &p, &rt).is_err(),
                    "probe ({i}, {s}) of the proof of {index} in {size} verified"
                );
            }
        }
    }

    #[test]
    fn consistency_proofs_match_the_vectors_and_verify() {
        for (old, new, want) in consistency_vectors() {
            let mut t = tree(8);
            let got = consistency_proof(&mut t, old, new)
                .expect("nodes")
                .expect("range");
            assert_eq!(got, want, "proof {old} -> {new}");
            let (r1, r2) = (h(ROOTS[old as usize - 1]), h(ROOTS[new as usize - 1]));
            verify_consistency(old, new, &r1, &r2, &want).expect("verifies");
        }
    }

    /// The probes of transparency-dev's `corruptConsistencyProof`: each must fail.
    #[test]
    fn corrupted_consistency_proofs_fail() {
        for (old, new, proof) in consistency_vectors()
            .into_iter()
            .filter(|v| !v.2.is_empty())
        {
            let (r1, r2) = (h(ROOTS[old as usize - 1]), h(ROOTS[new as usize - 1]));
            let wrong = leaf_hash(b"WrongRoot");
            let mut bad: Vec<(u64, u64, Hash, Hash, Vec<Hash>)> = vec![
                (old - 1, new, r1, r2, proof.clone()),
                (old + 1, new, r1, r2, proof.clone()),
                (old ^ 2, new, r1, r2, proof.clone()),
                (old, new * 2, r1, r2, proof.clone()),
                (old, new / 2, r1, r2, proof.clone()),
                (old, new, wrong, r2, proof.clone()),
                (old, new, r1, wrong, proof.clone()),
                (old, new, r2, r1, proof.clone()),
                (old, new, r1, r2, vec![]),
                (old, new, r1, r2, [proof.clone(), vec![r1]].concat()),
                (old, new, r1, r2, [proof.clone(), vec![r2]].concat()),
                (old, new, r1, r2, [vec![r1], proof.clone()].concat()),
                (old, new, r1, r2, [vec![r2], proof.clone()].concat()),
                (old, new, r1, r2, [vec![proof[0]], proof.clone()].concat()),
                (old, new, r1, r2, proof[..proof.len() - 1].to_vec()),
            ];
            for i in 0..proof.len() {
                let mut p = proof.clone();
                p[i][0] ^= 16;
                bad.push((old, new, r1, r2, p));
            }
            for (o, n, a, b, p) in bad {
                assert!(
                    verify_consistency(o, n, &a, &b, &p).is_err(),
                    "probe ({o} -> {n}) of the proof {old} -> {new} verified"
                );
            }
        }
    }

    /// transparency-dev's `TestVerifyConsistency` edge cases.
    #[test]
    fn consistency_edges() {
        let (a, b) = (leaf_hash(b"don't care 1"), leaf_hash(b"don't care 2"));
        assert!(verify_consistency(0, 0, &a, &b, &[]).is_err());
        assert!(verify_consistency(1, 1, &a, &b, &[]).is_err());
        assert!(verify_consistency(0, 0, &a, &a, &[]).is_ok());
        assert!(verify_consistency(0, 1, &a, &b, &[]).is_ok());
        assert!(verify_consistency(1, 1, &b, &b, &[]).is_ok());
        assert!(verify_consistency(1, 0, &a, &b, &[]).is_err());
        assert!(verify_consistency(2, 1, &a, &b, &[]).is_err());
        assert!(verify_consistency(1, 2, &a, &b, &[]).is_err());
        let e = EMPTY_ROOT;
        assert!(verify_consistency(0, 0, &e, &e, &[e]).is_err());
        assert!(verify_consistency(0, 1, &e, &e, &[e]).is_err());
        assert!(verify_consistency(1, 1, &e, &e, &[e]).is_err());
    }

    /// Every (index, size) and (old, new) up to 40 leaves: proofs made from stored nodes
    /// verify against the builder's roots, and fail for any other leaf.
    #[test]
    fn every_small_proof_round_trips() {
        let leaves: Vec<Hash> = (0..40u32).map(|i| leaf_hash(&i.to_be_bytes())).collect();
        let mut t = MemoryTree::from_leaves(leaves.clone());
        let roots: Vec<Hash> = (0..=40)
            .map(|n| MemoryTree::from_leaves(leaves[..n].to_vec()).root())
            .collect();
        for size in 1..=40u64 {
            for index in 0..size {
                let p = inclusion_proof(&mut t, index, size).unwrap().unwrap();
                verify_inclusion(
                    index,
                    size,
                    &leaves[index as usize],
                    &p,
                    &roots[size as usize],
                )
                .expect("inclusion");
                let other = leaves[((index + 1) % 40) as usize];
                assert!(verify_inclusion(index, size, &other, &p, &roots[size as usize]).is_err());
            }
            for old in 0..=size {
                let p = consistency_proof(&mut t, old, size).unwrap().unwrap();
                verify_consistency(old, size, &roots[old as usize], &roots[size as usize], &p)
                    .expect("consistency");
                if old > 0 && old < size {
                    let forked = leaf_hash(b"fork");
                    assert!(
                        verify_consistency(old, size, &forked, &roots[size as usize], &p).is_err()
                    );
                }
            }
        }
    }
}
