// Carries out the listeners' operations on the load balancer made or observed, forwarding to target groups by the
// ARNs the target groups' appliers resolved.
import {
  CreateListenerCommand,
  DeleteListenerCommand,
  ModifyListenerCommand,
} from "@aws-sdk/client-elastic-load-balancing-v2";
import { ignoreNotFound, type Appliers } from "../applying.ts";
import { call } from "../clients.ts";
import { listenerFields } from "../requestFields.ts";
import { changeListenerCertificates, setListenerAttributes } from "./certificatesAndAttributes.ts";
import type { ListenerOperation } from "./operations.ts";

export const listenerAppliers: Appliers<ListenerOperation> = {
  async createListener(op, s) {
    const out = await call("elbv2:CreateListener", () =>
      s.clients.elbv2.send(
        new CreateListenerCommand({
          LoadBalancerArn: s.lbArn(),
          Port: op.listener.port,
          ...listenerFields(op.listener, s.tgArn(op.listener.targetGroupName)),
        }),
      ),
    );
    const listenerArn = out.Listeners![0]!.ListenerArn!;
    s.written?.listeners.set(op.listener.port, listenerArn);
    const extra = op.listener.certificateArns.slice(1);
    if (extra.length)
      await changeListenerCertificates(s.clients, "addListenerCertificates", listenerArn, extra);
    if (Object.keys(op.listener.attributes).length)
      await setListenerAttributes(s.clients, listenerArn, op.listener.attributes);
  },
  async modifyListener(op, s) {
    // ModifyListener keeps what a request leaves out, so the protocol is named only when it changes: moving a
    // listener to another target group (a new node port, another target type) says only that, which every
    // implementation of the API takes (moto 5.2.5 refuses any request naming UDP, TCP_UDP or TLS).
    const { Protocol, ...fields } = listenerFields(op.listener, s.tgArn(op.listener.targetGroupName));
    await call("elbv2:ModifyListener", () =>
      s.clients.elbv2.send(
        new ModifyListenerCommand({
          ListenerArn: op.listenerArn,
          Port: op.listener.port,
          ...(Protocol !== op.protocolNow ? { Protocol } : {}),
          ...fields,
        }),
      ),
    );
  },
  async addListenerCertificates(op, s) {
    await changeListenerCertificates(s.clients, op.kind, op.listenerArn, op.certificateArns);
  },
  async removeListenerCertificates(op, s) {
    await changeListenerCertificates(s.clients, op.kind, op.listenerArn, op.certificateArns);
  },
  async modifyListenerAttributes(op, s) {
    await setListenerAttributes(s.clients, op.listenerArn, op.attributes);
  },
  async deleteListener(op, s) {
    await ignoreNotFound(
      call("elbv2:DeleteListener", () =>
        s.clients.elbv2.send(new DeleteListenerCommand({ ListenerArn: op.listenerArn })),
      ),
    );
  },
};
