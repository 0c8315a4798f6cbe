/**
 * A doubly linked list whose `add` gives back the node that `remove` takes: for the collections a request joins when
 * it starts and leaves when it ends (the deadlines the timer watches, the promise client's calls still waiting). A
 * `Set` of the requests' own objects (or closures) gives each new object a hash code, a call into the VM on every
 * request, and a `Map` keyed by numbers still hashes and rehashes; linking a node is a few field writes.
 *
 * @internal
 */

/** @internal */
export interface Node<A> {
  readonly value: A
  /** @internal */
  prev: Node<A> | undefined
  /** @internal */
  next: Node<A> | undefined
  /** Whether the node is still in its list. */
  linked: boolean
}

/** @internal */
export class LinkedList<A> {
  private head: Node<A> | undefined = undefined
  private tail: Node<A> | undefined = undefined

  /** Adds a value at the end; gives back its node. */
  add(value: A): Node<A> {
    const node: Node<A> = { value, prev: this.tail, next: undefined, linked: true }
    if (this.tail === undefined) this.head = node
    else this.tail.next = node
    this.tail = node
    return node
  }

  /** Removes a node (nothing when it was removed already). */
  remove(node: Node<A>): void {
    if (!node.linked) return
    node.linked = false
    if (node.prev === undefined) this.head = node.next
    else node.prev.next = node.next
    if (node.next === undefined) this.tail = node.prev
    else node.next.prev = node.prev
    node.prev = undefined
    node.next = undefined
  }

  /** The first node, or undefined when the list is empty (then each node's `next`). */
  get first(): Node<A> | undefined {
    return this.head
  }

  /** The nodes, first added first (a copy: the list may change while the caller goes through them). */
  nodes(): Array<Node<A>> {
    const out: Array<Node<A>> = []
    for (let node = this.head; node !== undefined; node = node.next) out.push(node)
    return out
  }

  /** Removes every value. */
  clear(): void {
    for (let node = this.head; node !== undefined;) {
      const next = node.next
      node.linked = false
      node.prev = undefined
      node.next = undefined
      node = next
    }
    this.head = undefined
    this.tail = undefined
  }
}
