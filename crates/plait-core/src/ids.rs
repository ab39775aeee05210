//! Typed indices into the simulator's arenas.

macro_rules! typed_id {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
        pub struct $name(pub u32);

        impl $name {
            #[inline]
            pub const fn index(self) -> usize {
                self.0 as usize
            }
            #[inline]
            pub fn from_index(i: usize) -> Self {
                $name(u32::try_from(i).expect("id overflow"))
            }
        }
    };
}

typed_id!(
    /// A host or router.
    NodeId
);
typed_id!(
    /// One direction of a link (a duplex `[[link]]` gives two).
    LinkId
);
typed_id!(
    /// A transport flow (one TCP connection, one UDP source).
    FlowId
);
typed_id!(
    /// A route: the sequence of directional links a packet follows.
    RouteId
);
typed_id!(
    /// A slot in the packet pool.
    PacketId
);
typed_id!(
    /// One of a flow's paths (a forward and a reverse route), numbered from 0 within the flow.
    PathId
);
