/// LRU and FIFO: one doubly linked list of slots, newest at the head, victim at
/// the tail. With `promotesOnAccess` a read moves the entry to the head (LRU);
/// without it the order is insertion order (FIFO).
final class RecencyQueue: EvictionQueue {

    // `@exclusivity(unchecked)`: lock-guarded state; the rationale is on EntryTable.
    private let links = SlotLinks()
    @exclusivity(unchecked) private var list = SlotList()
    private let promotesOnAccess: Bool

    init(promotesOnAccess: Bool) {
        self.promotesOnAccess = promotesOnAccess
    }

    func reserveCapacity(_ capacity: Int) {
        links.reserveCapacity(capacity)
    }

    func insert(_ slot: Int32, hash: UInt32, cost: Int) {
        list.pushHead(slot, links)
    }

    func access(_ slot: Int32) {
        if promotesOnAccess {
            list.moveToHead(slot, links)
        }
    }

    func overwrite(_ slot: Int32, cost: Int) {
        access(slot)
    }

    func remove(_ slot: Int32, hash: UInt32, isEviction: Bool) {
        list.unlink(slot, links)
    }

    func removeAll() {
        list = SlotList()
    }

    func victim(skipping protected: Int32) -> Int32 {
        let tail = list.tail
        return tail == protected && tail >= 0 ? links.prev[Int(tail)] : tail
    }

    func forEachInEvictionOrder(_ body: (Int32) -> Bool) {
        _ = list.forEachFromTail(links, body)
    }
}
