//! The network: links, queues, loss models, routing and topology.

pub mod link;
pub mod loss;
pub mod queue;
pub mod routing;
pub mod topology;
