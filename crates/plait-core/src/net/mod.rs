//! The network: links, queues, loss models, routing and topology.

pub mod loss;
pub mod queue;
