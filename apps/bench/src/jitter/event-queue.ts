/** A min-heap of timed events; equal times leave in insertion order, so runs are reproducible. */
export interface EventQueue<T> {
  push(time: number, event: T): void;
  /** The earliest event, or undefined when empty. */
  pop(): { readonly time: number; readonly event: T } | undefined;
  readonly size: number;
}

interface Entry<T> {
  readonly time: number;
  readonly order: number;
  readonly event: T;
}

/** Creates an empty {@link EventQueue}. */
export function eventQueue<T>(): EventQueue<T> {
  const heap: Entry<T>[] = [];
  let order = 0;
  const before = (a: Entry<T>, b: Entry<T>) => a.time < b.time || (a.time === b.time && a.order < b.order);
  return {
    push(time, event) {
      heap.push({ time, order: order++, event });
      let i = heap.length - 1;
      while (i > 0) {
        const parent = (i - 1) >> 1;
        if (!before(heap[i]!, heap[parent]!)) break;
        [heap[i], heap[parent]] = [heap[parent]!, heap[i]!];
        i = parent;
      }
    },
    pop() {
      const top = heap[0];
      if (!top) return undefined;
      const last = heap.pop()!;
      if (heap.length > 0) {
        heap[0] = last;
        let i = 0;
        for (;;) {
          const left = 2 * i + 1;
          const right = left + 1;
          let smallest = i;
          if (left < heap.length && before(heap[left]!, heap[smallest]!)) smallest = left;
          if (right < heap.length && before(heap[right]!, heap[smallest]!)) smallest = right;
          if (smallest === i) break;
          [heap[i], heap[smallest]] = [heap[smallest]!, heap[i]!];
          i = smallest;
        }
      }
      return { time: top.time, event: top.event };
    },
    get size() {
      return heap.length;
    },
  };
}
