package zipline

import "slices"

// slotCount is the number of hash slots of a Redis or Valkey Cluster.
const slotCount = 16384

// noSlot marks a command without keys; crossSlot one whose keys hash to
// different slots.
const (
	noSlot    int32 = -1
	crossSlot int32 = -2
)

// keySlot returns the hash slot of key, as the server computes it: CRC16
// (XMODEM) of the key, or of its hash tag — the part between the first "{"
// and the next "}", when that part is not empty — modulo 16384.
func keySlot(key string) int32 {
	if open := indexByte(key, '{'); open >= 0 {
		if end := indexByte(key[open+1:], '}'); end > 0 {
			key = key[open+1 : open+1+end]
		}
	}
	return int32(crc16(key) & (slotCount - 1))
}

// Slot returns the hash slot of key (0 to 16383) as a Redis or Valkey
// Cluster computes it: keys, and sharded pub/sub channels, with the same
// slot live on the same node. It is for choosing hash tags, as
// fanout.Partitions does to spread channels evenly over a cluster's nodes.
func Slot(key string) int { return int(keySlot(key)) }

func indexByte(s string, c byte) int {
	for i := 0; i < len(s); i++ {
		if s[i] == c {
			return i
		}
	}
	return -1
}

// crc16 is CRC-16/XMODEM (polynomial 0x1021, initial value 0), byte-wise
// through a table computed once.
func crc16(s string) uint16 {
	var crc uint16
	for i := 0; i < len(s); i++ {
		crc = crc<<8 ^ crc16Table[byte(crc>>8)^s[i]]
	}
	return crc
}

var crc16Table = func() (t [256]uint16) {
	for i := range t {
		crc := uint16(i) << 8
		for range 8 {
			if crc&0x8000 != 0 {
				crc = crc<<1 ^ 0x1021
			} else {
				crc <<= 1
			}
		}
		t[i] = crc
	}
	return t
}()

func hasKeys(args []arg) bool {
	for i := range args {
		if args[i].routes() {
			return true
		}
	}
	return false
}

// routes reports whether the argument says where the command goes: a key,
// or a slot named outright (CLUSTER COUNTKEYSINSLOT).
func (a *arg) routes() bool { return a.kind == argKey || a.kind == argSlot }

// slot is the slot a key or slot argument stands for.
func (a *arg) slot() int32 {
	if a.kind != argSlot {
		return keySlot(a.s)
	}
	if a.n < 0 || a.n >= slotCount {
		return noSlot // no such slot: any node says so
	}
	return int32(a.n)
}

// argsSlot returns the slot of the key (and slot) arguments: noSlot
// without any, crossSlot when they differ.
func argsSlot(args []arg) int32 {
	slot := noSlot
	for i := range args {
		if !args[i].routes() {
			continue
		}
		switch s := args[i].slot(); {
		case slot == noSlot:
			slot = s
		case s != slot:
			return crossSlot
		}
	}
	return slot
}

// keySlots lists the distinct slots of the key arguments, for errors.
func keySlots(args []arg) []int32 {
	var out []int32
	for i := range args {
		if args[i].routes() {
			if s := args[i].slot(); !slices.Contains(out, s) {
				out = append(out, s)
			}
		}
	}
	return out
}
