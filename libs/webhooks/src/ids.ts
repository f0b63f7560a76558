import { timeSortableId } from '@switchboard/events';

export { newEventId, timeSortableId } from '@switchboard/events';

export function newEndpointId(): string {
  return `wh_${timeSortableId()}`;
}

export function newDeliveryId(): string {
  return `whd_${timeSortableId()}`;
}
