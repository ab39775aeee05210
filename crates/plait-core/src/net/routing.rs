//! Static routing: shortest paths by propagation delay, then by hop count, with deterministic
//! tie-breaks (among equally good ways into a node, the one over the lower-numbered link, i.e.
//! the link declared first), and explicit per-flow routes given as node lists.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use crate::ids::{LinkId, NodeId};
use crate::net::topology::Topology;

/// The shortest path from `src` to `dst` as a list of link directions, or `None` if `dst` is
/// unreachable. Dijkstra on the key (total delay, hops); between equal keys the lower
/// predecessor link id wins, so ties always resolve the same way.
pub fn shortest_path(topo: &Topology, src: NodeId, dst: NodeId) -> Option<Vec<LinkId>> {
    let n = topo.nodes.len();
    let mut best: Vec<Option<(u64, u32)>> = vec![None; n];
    let mut via: Vec<Option<LinkId>> = vec![None; n];
    let mut heap = BinaryHeap::new();
    best[src.index()] = Some((0, 0));
    heap.push(Reverse((0u64, 0u32, src.0)));
    while let Some(Reverse((d, h, u))) = heap.pop() {
        if best[u as usize] != Some((d, h)) {
            continue;
        }
        if u == dst.0 {
            break;
        }
        for &l in &topo.nodes[u as usize].out_links {
            let (_, v) = topo.ends[l.index()];
            let key = (d + topo.delay_ns[l.index()], h + 1);
            let better = match best[v.index()] {
                None => true,
                Some(old) => key < old || (key == old && via[v.index()].is_some_and(|p| l < p)),
            };
            if better {
                best[v.index()] = Some(key);
                via[v.index()] = Some(l);
                heap.push(Reverse((key.0, key.1, v.0)));
            }
        }
    }
    best[dst.index()]?;
    let mut path = Vec::new();
    let mut at = dst;
    while at != src {
        let l = via[at.index()]?;
        path.push(l);
        at = topo.ends[l.index()].0;
    }
    path.reverse();
    Some(path)
}

/// The links joining consecutive nodes of `nodes` (the first declared link for each pair).
/// Returns the index of the first pair with no link on failure.
pub fn path_from_nodes(topo: &Topology, nodes: &[NodeId]) -> Result<Vec<LinkId>, usize> {
    let mut path = Vec::with_capacity(nodes.len().saturating_sub(1));
    for (i, pair) in nodes.windows(2).enumerate() {
        let link = topo.nodes[pair[0].index()]
            .out_links
            .iter()
            .copied()
            .find(|l| topo.ends[l.index()].1 == pair[1])
            .ok_or(i)?;
        path.push(link);
    }
    Ok(path)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::topology::NodeRole;

    fn diamond() -> (Topology, [NodeId; 4]) {
        // a -> b -> d and a -> c -> d, equal delays.
        let mut t = Topology::default();
        let a = t.add_node("a", NodeRole::Host);
        let b = t.add_node("b", NodeRole::Router);
        let c = t.add_node("c", NodeRole::Router);
        let d = t.add_node("d", NodeRole::Host);
        t.add_link(a, c, 10); // 0
        t.add_link(a, b, 10); // 1
        t.add_link(b, d, 10); // 2
        t.add_link(c, d, 10); // 3
        (t, [a, b, c, d])
    }

    #[test]
    fn ties_resolve_deterministically() {
        let (t, [a, _, _, d]) = diamond();
        // Both paths cost 20 ns and 2 hops; `d` is entered over the lower-numbered link (2).
        assert_eq!(shortest_path(&t, a, d), Some(vec![LinkId(1), LinkId(2)]));
        assert_eq!(shortest_path(&t, a, d), shortest_path(&t, a, d));
    }

    #[test]
    fn delay_beats_hops() {
        let mut t = Topology::default();
        let a = t.add_node("a", NodeRole::Host);
        let b = t.add_node("b", NodeRole::Router);
        let d = t.add_node("d", NodeRole::Host);
        t.add_link(a, d, 100); // direct but slow
        t.add_link(a, b, 10);
        t.add_link(b, d, 10);
        assert_eq!(shortest_path(&t, a, d), Some(vec![LinkId(1), LinkId(2)]));
    }

    #[test]
    fn unreachable_is_none() {
        let (t, [a, _, _, d]) = diamond();
        assert_eq!(shortest_path(&t, d, a), None);
        assert_eq!(shortest_path(&t, a, a), Some(vec![]));
    }

    #[test]
    fn explicit_routes() {
        let (t, [a, b, c, d]) = diamond();
        assert_eq!(
            path_from_nodes(&t, &[a, b, d]),
            Ok(vec![LinkId(1), LinkId(2)])
        );
        assert_eq!(path_from_nodes(&t, &[a, d]), Err(0));
        assert_eq!(path_from_nodes(&t, &[a, c, b]), Err(1));
    }
}
