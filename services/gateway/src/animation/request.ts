/** The media fields, in the order they are checked and stored. */
export const mediaFields = ['image', 'driving_video', 'audio'] as const;
export type MediaField = (typeof mediaFields)[number];
