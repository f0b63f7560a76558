{{/*
The Secrets this release generates, as a YAML list of {name, key, length}: the cluster secret for any
release with a component that reads it, every one but the webhook sender (a release of workers only,
as skaffold's per-service modules install, needs it as much as the gateway's), the key pepper and the
admin token for the release with the gateway, the webhook secrets key for a release with the gateway
or the webhook sender.
Each only without its existingSecret and with create: true. They hold random values, so they are never
rendered: the hook Job (secrets-job.yaml) creates each missing one once and never changes it.
*/}}
{{- define "switchboard.generatedSecrets" -}}
{{- $V := .Values -}}
{{- $secrets := list -}}
{{- $clusterSecretReaders := without (splitList " " (include "switchboard.enabledComponents" .)) "webhooks" "" -}}
{{- if and $clusterSecretReaders $V.clusterAuth.create (not $V.clusterAuth.existingSecret) -}}
{{- $secrets = append $secrets (dict "name" (include "switchboard.clusterSecretName" .) "key" $V.clusterAuth.existingSecretKey "length" 48) -}}
{{- end -}}
{{- if $V.gateway.enabled -}}
{{- if and $V.keyPepper.create (not $V.keyPepper.existingSecret) -}}
{{- $secrets = append $secrets (dict "name" (include "switchboard.keyPepperSecretName" .) "key" $V.keyPepper.existingSecretKey "length" 64) -}}
{{- end -}}
{{- if and $V.adminToken.create (not $V.adminToken.existingSecret) -}}
{{- $secrets = append $secrets (dict "name" (include "switchboard.adminTokenSecretName" .) "key" $V.adminToken.existingSecretKey "length" 48) -}}
{{- end -}}
{{- end -}}
{{- /* The gateway's and the sender's releases may be apart (skaffold): either creates it, once. */ -}}
{{- if and (or $V.gateway.enabled $V.webhooks.enabled) $V.webhookSecretsKey.create (not $V.webhookSecretsKey.existingSecret) -}}
{{- $secrets = append $secrets (dict "name" (include "switchboard.webhookSecretsKeySecretName" .) "key" $V.webhookSecretsKey.existingSecretKey "length" 64) -}}
{{- end -}}
{{- toYaml $secrets -}}
{{- end }}

{{/*
The hook objects' name: per release, since skaffold's releases share one fullname and each runs its
own hook.
*/}}
{{- define "switchboard.secretsJobName" -}}
{{- printf "%s-secrets" .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- end }}
