/** Marker key in config.json: tells operators and /models that these weights mean nothing. */
export const DEV_MODEL_MARKER = 'switchboard_dev_model';
