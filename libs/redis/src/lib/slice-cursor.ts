/**
 * Resume point of a slice (minute, bucket): epoch ms, the end of the last step whose task messages
 * the broker acknowledged. Written by the trigger after each step; a redelivered slice resumes here.
 */
export function sliceCursorKey(prefix: string, minute: number, bucket: number): string {
  return `${prefix}slice-cursor:${minute}:${bucket}`;
}
