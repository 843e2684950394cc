package api

import (
	"net/http"

	"github.com/getkin/kin-openapi/openapi3"
)

// conditionalDoc declares what conditional requests add to op (conditional.go):
// on a GET the If-None-Match it honours, the ETag, Cache-Control and Vary of
// its 200 and its 304; on a change of one resource the If-Match it honours.
// The parameters and the ETag header are components, named once.
func (b *builder) conditionalDoc(o *openapi3.Operation, op Operation, ok *openapi3.Response) {
	comp := b.doc.Components
	if comp.Parameters == nil {
		comp.Parameters = openapi3.ParametersMap{}
		comp.Headers = openapi3.Headers{}
	}
	if op.Revalidates() {
		if comp.Parameters["IfNoneMatch"] == nil {
			p := openapi3.NewHeaderParameter(headerIfNoneMatch).WithSchema(openapi3.NewStringSchema())
			p.Description = "The ETag of an answer already held (or several, separated by commas, or *): " +
				"when the answer would be the same, it is 304 Not Modified with no body, " +
				"and with a key or access token it takes no request from the rate limit"
			comp.Parameters["IfNoneMatch"] = &openapi3.ParameterRef{Value: p}
			comp.Headers["ETag"] = &openapi3.HeaderRef{Value: &openapi3.Header{Parameter: openapi3.Parameter{
				Description: "Strong entity tag of this exact answer: send it back in If-None-Match to poll, " +
					"and on a resource's detail in If-Match to update only the version read",
				Schema: openapi3.NewSchemaRef("", openapi3.NewStringSchema()),
			}}}
		}
		o.Parameters = append(o.Parameters, &openapi3.ParameterRef{Ref: "#/components/parameters/IfNoneMatch",
			Value: comp.Parameters["IfNoneMatch"].Value})
		if ok.Headers == nil {
			ok.Headers = openapi3.Headers{}
		}
		etag := &openapi3.HeaderRef{Ref: "#/components/headers/ETag", Value: comp.Headers["ETag"].Value}
		ok.Headers["ETag"] = etag
		ok.Headers["Cache-Control"] = stringHeader("private, no-cache: keep the answer only to ask again with its ETag")
		ok.Headers["Vary"] = stringHeader("The credential headers: an answer is one credential's")
		nm := openapi3.NewResponse().WithDescription("Not Modified: the answer is still the one whose ETag " +
			"If-None-Match named; no body")
		nm.Headers = openapi3.Headers{"ETag": etag, "Cache-Control": ok.Headers["Cache-Control"],
			"Vary": ok.Headers["Vary"]}
		if op.Auth == AuthKey {
			for name, h := range rateLimitHeaders() {
				nm.Headers[name] = h
			}
		}
		o.AddResponse(http.StatusNotModified, nm)
	}
	if op.IfMatch {
		if comp.Parameters["IfMatch"] == nil {
			p := openapi3.NewHeaderParameter(headerIfMatch).WithSchema(openapi3.NewStringSchema())
			p.Description = "Change the resource only if it is still as read: the ETag of its detail GET " +
				"(or several, or * for any existing version). When it has changed since, the answer is " +
				"412 PRECONDITION_FAILED and nothing is changed"
			comp.Parameters["IfMatch"] = &openapi3.ParameterRef{Value: p}
		}
		o.Parameters = append(o.Parameters, &openapi3.ParameterRef{Ref: "#/components/parameters/IfMatch",
			Value: comp.Parameters["IfMatch"].Value})
	}
}

func stringHeader(desc string) *openapi3.HeaderRef {
	return &openapi3.HeaderRef{Value: &openapi3.Header{Parameter: openapi3.Parameter{
		Description: desc, Schema: openapi3.NewSchemaRef("", openapi3.NewStringSchema()),
	}}}
}
