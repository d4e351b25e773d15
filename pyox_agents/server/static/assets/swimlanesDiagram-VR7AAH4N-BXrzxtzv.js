import{r as e,t}from"./chunk-SHT3W25Y-BZ729boO.js";import"./chunk-POPQ4Y6H-B8x1poR1.js";import"./mermaid.core-B_X7Av2S.js";import"./chunk-F27PBJKO-BhPDujhW.js";import"./chunk-L3NEJ4N5-CiFvINzV.js";import"./chunk-OSK3NFVY-DZ5Jmunb.js";import"./chunk-GVQU2GXP-C0zjYt_k.js";import"./chunk-4HAMMTFA-mpAyaUG5.js";import"./chunk-P2QGCYS3-KUq7cM-o.js";import"./chunk-GMAD6QVW-DYITZwIZ.js";import"./chunk-PWAF6VOD-1O1TPEzN.js";import"./chunk-75Z2AOVW-DXfDYb30.js";import"./chunk-DU6HZSFF-CAqOtxNw.js";import"./d3-selection-COWvaQNI.js";import{n}from"./chunk-Y2CYZVJY-DsF7k-Jl.js";var r=t({defaultLayout:`swimlane`,styles:n(t=>`${e(t)}
  .swimlane.cluster rect {
    stroke: ${t.clusterBorder} !important;
  }
  [data-look="neo"].cluster rect {
    filter: none;
  }
`,`getStyles`)});export{r as diagram};