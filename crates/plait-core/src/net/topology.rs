//! Nodes and the directed link graph.

use crate::ids::{LinkId, NodeId};

/// A host (traffic endpoint) or a router.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NodeRole {
    Host,
    Router,
}

#[derive(Clone, Debug)]
pub struct Node {
    pub name: String,
    pub role: NodeRole,
    /// Outgoing link directions, in increasing id order (deterministic routing tie-breaks).
    pub out_links: Vec<LinkId>,
}

/// The directed graph the router computes paths over: `ends[l] = (from, to)`.
#[derive(Clone, Debug, Default)]
pub struct Topology {
    pub nodes: Vec<Node>,
    pub ends: Vec<(NodeId, NodeId)>,
    /// Propagation delay of each link direction, in ns (the routing metric).
    pub delay_ns: Vec<u64>,
}

impl Topology {
    pub fn add_node(&mut self, name: &str, role: NodeRole) -> NodeId {
        let id = NodeId::from_index(self.nodes.len());
        self.nodes.push(Node {
            name: name.to_string(),
            role,
            out_links: Vec::new(),
        });
        id
    }

    pub fn add_link(&mut self, from: NodeId, to: NodeId, delay_ns: u64) -> LinkId {
        let id = LinkId::from_index(self.ends.len());
        self.ends.push((from, to));
        self.delay_ns.push(delay_ns);
        self.nodes[from.index()].out_links.push(id);
        id
    }

    pub fn node_by_name(&self, name: &str) -> Option<NodeId> {
        self.nodes
            .iter()
            .position(|n| n.name == name)
            .map(NodeId::from_index)
    }
}
