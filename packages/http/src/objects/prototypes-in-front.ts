/**
 * A memo of derived prototypes: for each prototype it is given, one object inheriting from it with
 * `members` in front, made once, so objects swapped onto it share one shape instead of own properties each.
 */
export function prototypesInFront(members: PropertyDescriptorMap): (proto: object) => object {
  const made = new WeakMap<object, object>();
  return (proto) => {
    let front = made.get(proto);
    if (!front) {
      front = Object.create(proto, members) as object;
      made.set(proto, front);
    }
    return front;
  };
}
