package interpreter

// Values is a JSON object of user values: inputs, an output, event data.
// It decodes numbers as json.Number, so values that travel through JSON
// (Temporal payloads, continue-as-new) are never rounded (spec §2.3).
type Values map[string]any

// UnmarshalJSON decodes the object keeping numbers exact.
func (v *Values) UnmarshalJSON(b []byte) error {
	var m map[string]any
	if err := DecodeExact(b, &m); err != nil {
		return err
	}
	*v = m
	return nil
}
