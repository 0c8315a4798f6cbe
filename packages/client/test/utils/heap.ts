/**
 * The heap a piece of work leaves held, per unit: for the tests that bound what hostile input may keep alive.
 */
import * as V8 from "node:v8"
import * as Vm from "node:vm"

V8.setFlagsFromString("--expose-gc")
const gc = Vm.runInNewContext("gc") as () => void

/** The heap and array buffers still used, after collecting garbage. */
const held = (): number => {
  gc()
  gc()
  const usage = process.memoryUsage()
  return usage.heapUsed + usage.arrayBuffers
}

/** What `work` leaves held (its result kept alive by the caller's own references), per one of `units`. */
export const heapPerByte = (units: number, work: () => void): number => {
  const before = held()
  work()
  return (held() - before) / units
}
