package api

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"unicode"

	"github.com/getkin/kin-openapi/openapi3"
)

// enumNameExtension carries an `enumName` tag from customizeSchema to
// nameEnums, which removes it.
const enumNameExtension = "x-pmapi-enum-name"

// enumUse is one place a string enum is written inline.
type enumUse struct {
	ref   *openapi3.SchemaRef
	set   func(*openapi3.SchemaRef)
	owner string // the schema or operation it is in
	field string
}

// nameEnums turns every inline string enum into a named component, one per
// set of values, shared by every use: the five task statuses are one
// TaskStatus wherever they appear (views, requests, events, list filters), so
// a generated client has one type for them. The name is an `enumName` tag's,
// or else its shortest owner and field (TaskView.status: TaskStatus...).
// A use with its own description or null allowed keeps them beside the
// reference (allOf), since OpenAPI 3.0 ignores a $ref's siblings.
func nameEnums(doc *openapi3.T) error {
	groups := map[string][]enumUse{}
	var visit func(owner, field string, ref *openapi3.SchemaRef, set func(*openapi3.SchemaRef))
	visit = func(owner, field string, ref *openapi3.SchemaRef, set func(*openapi3.SchemaRef)) {
		if ref == nil || ref.Ref != "" || ref.Value == nil {
			return
		}
		s := ref.Value
		if s.Type.Is("string") && len(s.Enum) > 0 && field != "" {
			groups[enumKey(s.Enum)] = append(groups[enumKey(s.Enum)], enumUse{ref: ref, set: set, owner: owner, field: field})
			return
		}
		if s.Items != nil {
			visit(owner, field, s.Items, func(r *openapi3.SchemaRef) { s.Items = r })
		}
		for _, name := range sortedKeys(s.Properties) {
			visit(owner, name, s.Properties[name], func(r *openapi3.SchemaRef) { s.Properties[name] = r })
		}
	}
	for _, name := range sortedKeys(doc.Components.Schemas) {
		visit(name, "", doc.Components.Schemas[name], func(*openapi3.SchemaRef) {})
	}
	for _, path := range doc.Paths.InMatchingOrder() {
		for _, o := range doc.Paths.Value(path).Operations() {
			for _, p := range o.Parameters {
				param := p.Value
				visit(strings.ToUpper(o.OperationID[:1])+o.OperationID[1:], param.Name, param.Schema,
					func(r *openapi3.SchemaRef) { param.Schema = r })
			}
		}
	}
	for _, key := range sortedKeys(groups) {
		uses := groups[key]
		name, tagged, err := enumName(uses)
		if err != nil {
			return err
		}
		if _, taken := doc.Components.Schemas[name]; taken && !tagged {
			name += "Enum"
		}
		if _, taken := doc.Components.Schemas[name]; taken {
			return fmt.Errorf("api: enum %s (%s) has the name of another schema; give it an enumName tag", name, key)
		}
		first := uses[0].ref.Value
		doc.Components.Schemas[name] = openapi3.NewSchemaRef(
			"",
			&openapi3.Schema{Type: &openapi3.Types{"string"}, Enum: first.Enum,
				Extensions: map[string]any{enumVarNamesExtension: enumVarNames(first.Enum)}},
		)
		for _, u := range uses {
			ref := openapi3.NewSchemaRef("#/components/schemas/"+name, doc.Components.Schemas[name].Value)
			if u.ref.Value.Description != "" || u.ref.Value.Nullable || u.ref.Value.Example != nil {
				// The type beside allOf is what nullable applies to (3.0).
				ref = openapi3.NewSchemaRef("", &openapi3.Schema{Type: &openapi3.Types{"string"}, AllOf: openapi3.SchemaRefs{ref},
					Description: u.ref.Value.Description, Nullable: u.ref.Value.Nullable, Example: u.ref.Value.Example})
			}
			u.set(ref)
		}
	}
	return nil
}

// enumVarNamesExtension names each value of an enum for code generators
// (oapi-codegen and openapi-generator read it): without it a generated
// constant repeats the value's spelling, TaskStatusIN_PROGRESS or
// ErrorCodeINVALIDTRANSITION, where Go and most languages want InProgress.
const enumVarNamesExtension = "x-enum-varnames"

// enumVarNames spells each value in camel case: IN_PROGRESS is InProgress,
// task.created TaskCreated.
func enumVarNames(values []any) []string {
	out := make([]string, len(values))
	for i, v := range values {
		var b strings.Builder
		notAlphanumeric := func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }
		for _, word := range strings.FieldsFunc(fmt.Sprint(v), notAlphanumeric) {
			lower := strings.ToLower(word)
			b.WriteString(strings.ToUpper(lower[:1]) + lower[1:])
		}
		out[i] = b.String()
	}
	return out
}

// enumKey is a set of values, whatever their order.
func enumKey(values []any) string {
	s := make([]string, len(values))
	for i, v := range values {
		s[i] = fmt.Sprint(v)
	}
	sort.Strings(s)
	return strings.Join(s, ",")
}

// enumName is the group's tagged name (one at most), else the shortest
// owner+Field of its uses; a field named like its owner's type (a task's
// status in TaskView) drops the owner's View/Request/Event suffix.
func enumName(uses []enumUse) (name string, tagged bool, err error) {
	var tags, auto []string
	for _, u := range uses {
		if n, ok := u.ref.Value.Extensions[enumNameExtension].(string); ok {
			delete(u.ref.Value.Extensions, enumNameExtension)
			if !slices.Contains(tags, n) {
				tags = append(tags, n)
			}
		}
		auto = append(auto, ownerStem(u.owner)+camelEvent(u.field))
	}
	switch {
	case len(tags) > 1:
		return "", true, fmt.Errorf("api: one set of enum values has the names %v", tags)
	case len(tags) == 1:
		return tags[0], true, nil
	}
	sort.Slice(auto, func(i, j int) bool {
		if len(auto[i]) != len(auto[j]) {
			return len(auto[i]) < len(auto[j])
		}
		return auto[i] < auto[j]
	})
	return auto[0], false, nil
}

// ownerStem is the schema name without the suffix that says its role.
func ownerStem(owner string) string {
	for _, suffix := range []string{"View", "CreateRequest", "UpdateRequest", "Request", "Event", "Query"} {
		if s, ok := strings.CutSuffix(owner, suffix); ok && s != "" {
			return s
		}
	}
	return owner
}
