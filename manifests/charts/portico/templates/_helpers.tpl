{{/*
The prefix of every object's name: the release's name when it contains "portico" (so a release named
portico makes portico-controller, as the overlays do), else "<release>-portico"; or fullnameOverride.
*/}}
{{- define "portico.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 40 | trimSuffix "-" -}}
{{- else if contains "portico" .Release.Name -}}
{{- .Release.Name | trunc 40 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-portico" .Release.Name | trunc 40 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{/*
Labels of an object of component `component` (controller or speaker; none for the namespace). `partOf: false`
leaves out app.kubernetes.io/part-of, which the metal overlay's own RBAC objects lack. The last three are
Helm's own: which chart made the object, and which release owns it.
*/}}
{{- define "portico.labels" -}}
{{- include "portico.labelLines" . | trim -}}
{{- end -}}

{{- define "portico.labelLines" -}}
{{- $root := .root -}}
{{- with .component }}
app.kubernetes.io/name: portico
app.kubernetes.io/component: {{ . }}
{{- end }}
{{- if ne .partOf false }}
app.kubernetes.io/part-of: portico
{{- end }}
helm.sh/chart: {{ printf "%s-%s" $root.Chart.Name $root.Chart.Version | replace "+" "_" }}
app.kubernetes.io/managed-by: {{ $root.Release.Service }}
app.kubernetes.io/instance: {{ $root.Release.Name }}
{{- end -}}

{{/* The labels that select a component's pods: the same as the overlays', so no release label. */}}
{{- define "portico.selectorLabels" -}}
app.kubernetes.io/name: portico
app.kubernetes.io/component: {{ . }}
{{- end -}}

{{/* The load-balancer class served: the value, or the provider's own. */}}
{{- define "portico.loadBalancerClass" -}}
{{- if .Values.loadBalancerClass -}}
{{- .Values.loadBalancerClass -}}
{{- else -}}
{{- get (dict "aws" "portico.io/aws-nlb" "azure" "portico.io/azure-lb" "metal" "portico.io/metal") .Values.provider -}}
{{- end -}}
{{- end -}}

{{/* "true" when the speaker runs: speaker.enabled, or by default with provider metal. */}}
{{- define "portico.speakerEnabled" -}}
{{- if kindIs "invalid" .Values.speaker.enabled -}}
{{- if eq .Values.provider "metal" }}true{{ end -}}
{{- else if .Values.speaker.enabled -}}
true
{{- end -}}
{{- end -}}

{{- define "portico.memberlistSecretName" -}}
{{- .Values.speaker.memberlist.secretName | default (printf "%s-memberlist" (include "portico.fullname" .)) -}}
{{- end -}}

{{- define "portico.image" -}}
{{- if .Values.image.tag -}}
{{- printf "%s:%s" .Values.image.repository .Values.image.tag -}}
{{- else -}}
{{- .Values.image.repository -}}
{{- end -}}
{{- end -}}

{{/* azure.json's text: the file as given (--set-file), or the map's keys as indented JSON. */}}
{{- define "portico.azureConfig" -}}
{{- if kindIs "string" .Values.azure.cloudConfig -}}
{{- .Values.azure.cloudConfig -}}
{{- else -}}
{{- printf "%s\n" (toPrettyJson .Values.azure.cloudConfig) -}}
{{- end -}}
{{- end -}}

{{/*
The ConfigMap's name with kustomize's configMapGenerator suffix (api/hasher): the first ten hex digits of the
SHA-256 of {"data":...,"kind":"ConfigMap","name":""} (kustomize looks the name up by a path it does not
resolve, so it hashes an empty one), with 0, 1, 3, a, e spelled g, h, k, m, t. The same content gets the same
name as the aks overlay's, and a new content a new name, which rolls the controller.
*/}}
{{- define "portico.azureConfigMapName" -}}
{{- $encoded := dict "data" (dict "azure.json" (include "portico.azureConfig" .)) "kind" "ConfigMap" "name" "" | toJson -}}
{{- $hash := sha256sum $encoded | trunc 10 | replace "0" "g" | replace "1" "h" | replace "3" "k" | replace "a" "m" | replace "e" "t" -}}
{{- printf "%s-azure-config-%s" (include "portico.fullname" .) $hash -}}
{{- end -}}

{{/*
The FRR agent's ConfigMap name with kustomize's configMapGenerator suffix, computed as for azure.json above, so
the metal overlay's name and the chart's are one, and a new agent script rolls the speakers. files/ holds a
symbolic link to manifests/speaker/frr/portico-frr-agent.py, which Helm follows: one script for both.
*/}}
{{- define "portico.frrAgentConfigMapName" -}}
{{- $encoded := dict "data" (dict "portico-frr-agent.py" (.Files.Get "files/portico-frr-agent.py")) "kind" "ConfigMap" "name" "" | toJson -}}
{{- $hash := sha256sum $encoded | trunc 10 | replace "0" "g" | replace "1" "h" | replace "3" "k" | replace "a" "m" | replace "e" "t" -}}
{{- printf "%s-frr-agent-%s" (include "portico.fullname" .) $hash -}}
{{- end -}}

{{/*
Settings that cannot work together, refused with the value to change, before anything is sent to the cluster
(values.schema.json has already checked each value on its own). A setting is never ignored silently.
*/}}
{{- define "portico.validate" -}}
{{- $p := .Values.provider -}}
{{- if not .Values.clusterName -}}
{{- fail "clusterName is required: a name unique per cluster (in the AWS account or Azure subscription), with which Portico tags what it makes: --set clusterName=<name>" -}}
{{- end -}}
{{- if and (ne $p "aws") (or .Values.aws.region .Values.aws.roleArn) -}}
{{- fail (printf "aws.region and aws.roleArn apply to provider aws only (provider is %s): remove them" $p) -}}
{{- end -}}
{{- if and (ne $p "azure") (or .Values.azure.workloadIdentity.clientId .Values.azure.cloudConfig) -}}
{{- fail (printf "azure.workloadIdentity.clientId and azure.cloudConfig apply to provider azure only (provider is %s): remove them" $p) -}}
{{- end -}}
{{- if and (eq $p "azure") (not .Values.azure.cloudConfig) -}}
{{- fail "azure.cloudConfig is required with provider azure: --set-file azure.cloudConfig=azure.json (cloud-provider-azure's cloud config: subscriptionId, resourceGroup, location, vnetName, subnetName, securityGroupName)" -}}
{{- end -}}
{{- if kindIs "string" .Values.azure.cloudConfig -}}
{{- $parsed := fromJson (.Values.azure.cloudConfig | default "{}") -}}
{{- if hasKey $parsed "Error" -}}
{{- fail (printf "azure.cloudConfig is not JSON (%s): give azure.json's text (--set-file azure.cloudConfig=azure.json) or its keys as a map" (index $parsed "Error")) -}}
{{- end -}}
{{- end -}}
{{- if not (include "portico.speakerEnabled" .) -}}
{{- if .Values.speaker.memberlist.createSecret -}}
{{- fail "speaker.memberlist.createSecret=true, but no speaker runs (provider metal with speaker.enabled unset or true runs one): remove speaker.memberlist.createSecret" -}}
{{- end -}}
{{- if .Values.speaker.extraArgs -}}
{{- fail "speaker.extraArgs is set, but no speaker runs (provider metal with speaker.enabled unset or true runs one): remove speaker.extraArgs" -}}
{{- end -}}
{{- end -}}
{{- if and (ne $p "metal") (eq .Values.speaker.enabled true) -}}
{{- fail (printf "speaker.enabled=true needs provider metal (provider is %s): the speaker announces bare-metal addresses; remove speaker.enabled" $p) -}}
{{- end -}}
{{- range .Values.controller.extraArgs -}}
{{- $flag := regexReplaceAll "=.*" . "" -}}
{{- $value := get (dict "--provider" "provider" "--cluster-name" "clusterName" "--load-balancer-class" "loadBalancerClass" "--aws-region" "aws.region" "--azure-config" "azure.cloudConfig") $flag -}}
{{- if $value -}}
{{- fail (printf "controller.extraArgs: %s is set by the chart: set the value %s instead" $flag $value) -}}
{{- end -}}
{{- end -}}
{{- range .Values.speaker.extraArgs -}}
{{- $flag := regexReplaceAll "=.*" . "" -}}
{{- $value := get (dict "--metrics-address" "speaker.metricsPort" "--memberlist-port" "speaker.memberlistPort" "--memberlist-secret-file" "speaker.memberlist.secretName" "--load-balancer-class" "loadBalancerClass" "--frr-config-dir" "speaker.frr.enabled") $flag -}}
{{- if $value -}}
{{- fail (printf "speaker.extraArgs: %s is set by the chart: set the value %s instead" $flag $value) -}}
{{- end -}}
{{- end -}}
{{- include "portico.validateNamespace" . -}}
{{- end -}}

{{/*
The speaker needs Pod Security's privileged level (the host network and CAP_NET_RAW; FRR's NET_ADMIN and
SYS_ADMIN). In a release namespace whose enforce label names another level its pods would be refused, and the
DaemonSet would stand with none and say why only in its events: refused here instead, naming the label and the
fix, before anything is made. A namespace without the label gets the cluster's default level, which no API
shows (NOTES.txt says to label it); `lookup` reads nothing under `helm template`, whose output goes elsewhere.
*/}}
{{- define "portico.validateNamespace" -}}
{{- if and (include "portico.speakerEnabled" .) (not .Values.namespace.create) -}}
{{- $ns := lookup "v1" "Namespace" "" .Release.Namespace -}}
{{- $level := dig "metadata" "labels" "pod-security.kubernetes.io/enforce" "" $ns -}}
{{- if and $level (ne $level "privileged") -}}
{{- fail (printf "namespace %s enforces Pod Security level %s (its label pod-security.kubernetes.io/enforce), which refuses the speaker's pods (host network, CAP_NET_RAW): label it privileged (kubectl label namespace %s pod-security.kubernetes.io/enforce=privileged --overwrite) or install into a namespace labelled so" .Release.Namespace $level .Release.Namespace) -}}
{{- end -}}
{{- end -}}
{{- end -}}
