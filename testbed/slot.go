package testbed

import "strings"

// Slots is the number of hash slots in a Redis or Valkey cluster.
const Slots = 16384

// KeySlot returns the hash slot of key, as CLUSTER KEYSLOT computes it:
// CRC16 (XMODEM) of the key modulo 16384, where a key holding a non-empty
// hash tag ("{...}", the first '{' and the first '}' after it) hashes only
// the tag, so that keys sharing a tag share a slot.
//
// The test bed has its own copy so that a test can check the client's
// routing against an independent implementation (and against the server).
func KeySlot(key string) int {
	if open := strings.IndexByte(key, '{'); open >= 0 {
		if n := strings.IndexByte(key[open+1:], '}'); n > 0 {
			key = key[open+1 : open+1+n]
		}
	}
	return int(crc16(key) % Slots)
}

// crc16 is CRC-16/XMODEM: polynomial 0x1021, initial value 0, no
// reflection, no final XOR.
func crc16(s string) uint16 {
	var crc uint16
	for i := 0; i < len(s); i++ {
		crc ^= uint16(s[i]) << 8
		for range 8 {
			if crc&0x8000 != 0 {
				crc = crc<<1 ^ 0x1021
			} else {
				crc <<= 1
			}
		}
	}
	return crc
}
