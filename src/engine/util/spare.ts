/**
 * How many spare slots an array loaded with `used` entries keeps for the saves to come: about 3%,
 * at least 256, so the first saves after opening append instead of copying the whole array (and
 * a scan over the slots does little extra work).
 */
export function spareSlots(used: number): number {
  return Math.max(256, used >> 5);
}
