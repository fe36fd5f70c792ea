/** A JSON-like attribute value (Dates become epoch milliseconds; undefined members are skipped). */
export type AttributeValue = string | number | boolean | null | Date | AttributeValue[] | { [key: string]: AttributeValue }
/** Attributes of a call: a plain object, or a Map (ArkTS `collections.Map`) with string keys. */
export type Attributes = { [key: string]: AttributeValue } | Map<string, AttributeValue>
/** One action of `addActions`. */
export interface ActionEvent {
  type: ActionType
  name: string
  attributes?: Attributes
}
/** The user of `setUser`. */
export interface UserInfo {
  id?: string
  name?: string
  email?: string
  extra?: { [key: string]: AttributeValue }
}
/**
 * A RUM document as the event mapper sees it (the RUM event format), field by name: `type` (a
 * string) and `date` (epoch ms) always, then `context`, `usr`, `view`, `action`, `error`, ...
 * A Record, so ArkTS reads and replaces fields by name: `doc['context'] as Record<string, AttributeValue>`.
 */
export type RumDocument = Record<string, AttributeValue>
/** A claimed batch: NDJSON body, view documents reduced to their latest version. */
export interface NextBatch {
  id: string
  /** Send as it is, with `Content-Encoding: <encoding>`: gzip unless `batchEncoding: 'identity'`
   * (or a plain batch left by an earlier version). */
  body: ArrayBuffer
  encoding: BatchEncoding
  /** Documents in the body (once decompressed). */
  eventCount: number
  bytes: number
}
