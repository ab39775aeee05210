//! The packet pool: a slab of packets with a free list, so that the hot path allocates
//! nothing once the pool has grown to the run's peak number of packets in flight.

use crate::ids::PacketId;
use crate::packet::Packet;

#[derive(Debug, Default)]
pub struct PacketPool {
    slots: Vec<Packet>,
    free: Vec<u32>,
}

impl PacketPool {
    #[inline]
    pub fn alloc(&mut self, p: Packet) -> PacketId {
        if let Some(i) = self.free.pop() {
            self.slots[i as usize] = p;
            PacketId(i)
        } else {
            self.slots.push(p);
            PacketId::from_index(self.slots.len() - 1)
        }
    }

    /// A slot for a new packet, to be written in place by the caller (every field of it: the
    /// slot holds whatever it held before, or a placeholder when the pool grows).
    #[inline(always)]
    pub fn alloc_slot(&mut self) -> (PacketId, &mut Packet) {
        let i = match self.free.pop() {
            Some(i) => i as usize,
            None => {
                self.slots.push(Packet::PLACEHOLDER);
                self.slots.len() - 1
            }
        };
        (PacketId::from_index(i), &mut self.slots[i])
    }

    #[inline]
    pub fn get(&self, id: PacketId) -> &Packet {
        &self.slots[id.index()]
    }

    #[inline]
    pub fn get_mut(&mut self, id: PacketId) -> &mut Packet {
        &mut self.slots[id.index()]
    }

    /// Returns the slot to the free list and the packet it held.
    #[inline]
    pub fn free(&mut self, id: PacketId) -> Packet {
        self.free.push(id.0);
        self.slots[id.index()]
    }

    /// Returns the slot to the free list, leaving the packet where it is (no copy).
    #[inline]
    pub fn release(&mut self, id: PacketId) {
        self.free.push(id.0);
    }

    /// Packets currently allocated.
    pub fn live(&self) -> usize {
        self.slots.len() - self.free.len()
    }
}
