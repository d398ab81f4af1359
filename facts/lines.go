package facts

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"unicode/utf16"

	yaml "go.yaml.in/yaml/v3"
)

// File lines of a snapshot file, as editors count them: package yamlpos corrects yaml.v3's lines the
// same way for the manifest reader, so a snapshot read with --facts and one read from the input get the
// same lines.

// utf8Text returns data as UTF-8, and false when it is UTF-16 cut in the middle of a character.
// yaml.v3 also reads UTF-16 with a byte order mark (as Windows PowerShell writes files), but lines are
// counted in the text, so the snapshot is transcoded first.
func utf8Text(data []byte) ([]byte, bool) {
	var order binary.ByteOrder
	switch {
	case bytes.HasPrefix(data, []byte{0xFE, 0xFF}):
		order = binary.BigEndian
	case bytes.HasPrefix(data, []byte{0xFF, 0xFE}):
		order = binary.LittleEndian
	default:
		return data, true
	}
	body := data[2:]
	units := make([]uint16, len(body)/2)
	for i := range units {
		units[i] = order.Uint16(body[2*i:])
	}
	return []byte(string(utf16.Decode(units))), len(body)%2 == 0
}

// firstSyntaxError returns the first syntax error of a YAML stream, or nil.
func firstSyntaxError(data []byte) error {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	for {
		var n yaml.Node
		if err := dec.Decode(&n); err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
	}
}
