package api

import (
	"fmt"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
)

// envelopeOf is the named schema of the success envelope around data: one per
// data type (TaskView's is TaskEnvelope, TaskList's TaskListEnvelope), so a
// generated client has one type per answer instead of an anonymous struct per
// operation. Data that is no component (a list of strings) takes the
// operation's name.
func (b *builder) envelopeOf(op Operation, data *openapi3.SchemaRef) (*openapi3.SchemaRef, error) {
	base := strings.ToUpper(op.ID[:1]) + op.ID[1:]
	if data.Ref != "" {
		base = strings.TrimSuffix(strings.TrimPrefix(data.Ref, "#/components/schemas/"), "View")
	}
	name := base + "Envelope"
	ref := openapi3.NewSchemaRef("#/components/schemas/"+name, nil)
	if _, ok := b.doc.Components.Schemas[name]; ok {
		if of, ok := b.envelopes[name]; !ok || of != data.Ref || data.Ref == "" {
			return nil, fmt.Errorf("api: schema %s is both an envelope and something else", name)
		}
		return ref, nil
	}
	s := openapi3.NewObjectSchema().
		WithProperty("success", &openapi3.Schema{Type: &openapi3.Types{"boolean"}, Description: "Always true on success"}).
		WithPropertyRef("data", data)
	s.Description = "Success answer carrying " + base
	s.Required = []string{"success", "data"}
	s.AdditionalProperties = openapi3.AdditionalProperties{Has: new(false)}
	b.envelopes[name] = data.Ref
	b.doc.Components.Schemas[name] = openapi3.NewSchemaRef("", s)
	ref.Value = s
	return ref, nil
}
