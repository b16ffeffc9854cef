import React from 'react';
import { renderToString } from 'react-dom/server';
import { SsrApp } from './ssr-app.mjs';

/**
 * The server half of the server-rendered page, in a process of its own as a Next.js server is:
 * prints the HTML of SsrApp for the JSON config in argv[2]. The functions it gets are stand-ins
 * that fail if the server calls them.
 */
const unused = () => {
  throw new Error('the server called a handler');
};
const config = {
  ...JSON.parse(process.argv[2]),
  tokenProvider: unused,
  onToggle: unused,
  onAfterShow: unused,
  onConnect: unused,
};
process.stdout.write(renderToString(React.createElement(SsrApp, { config })));
