package chengine

import "encoding/binary"

// clickhouse-go opens an HTTP connection by sending helloQuery with client_protocol_version
// and decodes the answer as a Native block at that protocol revision; every later block it
// decodes at the revision the answer reports. chdb writes Native at revision 0 whatever the
// client asks for, so the hello is answered here: a block encoded at the client's revision
// that reports revision 0, which makes the client read chdb's blocks as they are written.

// helloBlock encodes the hello answer (displayName, version, revision 0, timezone) as a
// Native block at protocol revision rev.
func helloBlock(displayName, version, timezone string, rev int) []byte {
	var b []byte
	str := func(s string) {
		b = binary.AppendUvarint(b, uint64(len(s)))
		b = append(b, s...)
	}
	if rev > 0 {
		// Block info (DBMS_MIN_REVISION_WITH_BLOCK_INFO): is_overflows = false,
		// bucket_num = -1, end of fields.
		b = append(b, 1, 0, 2, 0xff, 0xff, 0xff, 0xff, 0)
	}
	b = binary.AppendUvarint(b, 4) // columns
	b = binary.AppendUvarint(b, 1) // rows
	col := func(name, typ string, data func()) {
		str(name)
		str(typ)
		if rev >= 54454 { // DBMS_MIN_REVISION_WITH_CUSTOM_SERIALIZATION: no custom kinds
			b = append(b, 0)
		}
		data()
	}
	col("displayName()", "String", func() { str(displayName) })
	col("version()", "String", func() { str(version) })
	col("revision()", "UInt32", func() { b = binary.LittleEndian.AppendUint32(b, 0) })
	col("timezone()", "String", func() { str(timezone) })
	return b
}
