/**
 * The `stream` of a receiver's event: set only when the message carried one, so the events of mail sent
 * without a stream stay exactly what they were (`DeliveryEvent.stream` absent means none).
 */
export function streamField(stream: string | null): { stream?: string } {
  return stream === null ? {} : { stream };
}
