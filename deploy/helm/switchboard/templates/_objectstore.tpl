{{/*
The object store as a component that uses it sees it (the gateway, and workers with
usesObjectStore), as one of (dict "root" $ "component" c "values" v "part" <part>):
  env     a YAML map: S3_ENDPOINT and S3_BUCKET (S3_REGION when set) and, with s3.webIdentity, how
          the pod authenticates; else OBJECT_STORE_DIR=/tmp/objects, a folder no other pod sees
  mount   the mount of the service-account token the chart projects (s3.webIdentity.tokenAudience)
  volume  that token's volume
S3 is on for a component with an S3 Secret (its own or the shared one; its keys come as files,
switchboard.secretItems) or with s3.webIdentity (short-lived keys for the pod's own identity).
Renders nothing for a component that does not use the object store.
*/}}
{{- define "switchboard.objectStore" -}}
{{- if include "switchboard.usesObjectStore" . -}}
{{- $S3 := .root.Values.s3 -}}
{{- $identity := $S3.webIdentity -}}
{{- $tokenDir := "/var/run/secrets/switchboard-s3" -}}
{{- if eq .part "env" -}}
{{- $env := dict -}}
{{- if or (include "switchboard.s3Secret" .) $identity.enabled -}}
{{- $_ := set $env "S3_ENDPOINT" $S3.endpoint -}}
{{- $_ := set $env "S3_BUCKET" $S3.bucket -}}
{{- if $S3.region }}{{ $_ := set $env "S3_REGION" $S3.region }}{{ end -}}
{{- if $identity.enabled -}}
{{- $_ := set $env "S3_CREDENTIALS" "web-identity" -}}
{{- if $identity.stsEndpoint }}{{ $_ := set $env "S3_STS_ENDPOINT" $identity.stsEndpoint }}{{ end -}}
{{- if $identity.roleArn }}{{ $_ := set $env "AWS_ROLE_ARN" $identity.roleArn }}{{ end -}}
{{- if $identity.tokenAudience }}{{ $_ := set $env "AWS_WEB_IDENTITY_TOKEN_FILE" (printf "%s/token" $tokenDir) }}{{ end -}}
{{- end -}}
{{- else -}}
{{- $_ := set $env "OBJECT_STORE_DIR" "/tmp/objects" -}}
{{- end -}}
{{- toYaml $env -}}
{{- else if and $identity.enabled $identity.tokenAudience -}}
{{- if eq .part "mount" -}}
- { name: s3-token, mountPath: {{ $tokenDir }}, readOnly: true }
{{- else if eq .part "volume" -}}
- name: s3-token
  projected:
    sources:
      - serviceAccountToken:
          audience: {{ $identity.tokenAudience | quote }}
          expirationSeconds: {{ $identity.tokenExpirationSeconds }}
          path: token
{{- end -}}
{{- end -}}
{{- end -}}
{{- end }}
