" Vim syntax file for glow-rs .gir instruction IR (docs/gir.md).
" Install: copy editors/vim/syntax and editors/vim/ftdetect into ~/.vim/.
if exists("b:current_syntax")
  finish
endif

syn keyword girOpcode allocactivation argmax argmin avgpool avgpoolgrad batchedadd batchedreduceadd
      \ batchedreducemax batchedreducemin batchedreduceprod batchmatmul batchnormalization celu channelwisequantizedconvolution clip
      \ convertto convolution convolutiongrad convtranspose copy deallocactivation debugprint dequantize elementabs
      \ elementacos elementacosh elementadd elementand elementasin elementasinh elementatan
      \ elementatanh elementceil elementcmpeq elementcmplt elementcmplte elementcmpneq elementcos
      \ elementcosh elementdiv elementerf elementexp elementfloor elementlog elementmax elementmin
      \ elementmul elementneg elementnot elementor elementpow elementreciprocal elementround
      \ elementrsqrt elementselect elementsign elementsin elementsinh elementsqrt elementsub
      \ elementbitwiseand elementbitwiseor elementbitwisexor elementbitshiftleft
      \ elementbitshiftright elementfmod elementtan elementxor elu extracttensor fullyconnected gather gatherelements gathernd gelu
      \ inserttensor intlookuptable layernormalization leakyrelu localresponsenormalization logsoftmax matmul
      \ maxpool maxpoolwithargmax maxpoolwithargmaxgrad onehot quantize relu rescalequantized rowwisequantizedfullyconnected scatterelements scatternd selu sigmoid softmax
      \ softplus splat tanh tensorview topk touch transpose
      \ batchnormalizationgrad crossentropyloss crossentropylossgrad localresponsenormalizationgrad relugrad sgd sigmoidgrad softmaxgrad tanhgrad
      \ lengthssum sparselengthssum sparselengthsweightedsum embedding embeddingbag lengthstoranges lengthsrangefill gatherranges
      \ sparsetodensemask batchsparsetodense fillexampleswithindicator sparselabelsplit boundscheckindices instrument traceevent externalfunctioncall
      \ rowwisequantizedsparselengthsweightedsum batchedunaryembeddingsbags permutepooledembeddings
      \ fusedrowwisequantizedsparselengthsweightedsum fusedrowwisequantizedsparselengthssum embeddingbagbyterowwiseoffsets
      \ elementrsubconst elementmulconst elementtruncate nantonum hardswish elementisnan elementbitwisenot modulo
      \ simplebinarycrossentropywithlogits weightbinarycrossentropywithlogits posweightbinarycrossentropywithlogits binarycrossentropywithlogits
      \ batchedpairwisedotproduct batchedpairwisedotproductgrad thresholdgrad tflitecustomoperator
      \ pad resizenearest resizebilinear spacetodepth flip cumsum nonzero bucketize batchonehot scatterdata
      \ adaptiveavgpool indexadd gaussianfill
      \ nonmaxsuppression roialign bboxtransform mfcc
      \ dynamicquantizedfullyconnected dynamicrowwisequantizedfullyconnected quantizationprofile lookuptable
      \ mean concat convolution3d indexput prunedarraylookup sumwithzeropadding

syn keyword girKeyword function declare code WeightVar const mutable
syn match girOperandKind "@\(inout\|in\|out\)\>"
syn match girName "%[A-Za-z0-9_.$-]\+"
syn region girName start=+%"+ skip=+\\.+ end=+"+
syn match girType "\<\(float\|float16\|bfloat16\|float64\|i8\|ui8\|i16\|i32\|index32\|index64\|int8\|uint8\|bool\)<[^>]*>"
syn match girMember "\<[A-Z][A-Za-z0-9]*\ze:"
syn match girNumber "\<-\?[0-9]\+\(\.[0-9]*\)\?\([eE][-+]\?[0-9]\+\)\?\>"
syn match girIndex "^\s*[0-9]\+\ze\s\+%"
" Strings are top level, so a `//` or `;` inside one is not a comment.
syn region girString start=+"+ skip=+\\.+ end=+"+
syn match girDirective "\<\(RUN\|REQUIRES\|UNSUPPORTED\|XFAIL\)\ze:" contained
syn match girDirective "\<[A-Z][A-Z0-9_]*\(-\(NEXT\|SAME\|NOT\|DAG\|LABEL\|EMPTY\|COUNT-[0-9]\+\)\)\?\ze:" contained
syn match girComment "//.*$" contains=girDirective,girTodo
" Glow's own comments: `; size = 512 bytes` after a declaration.
syn match girComment ";.*$" contains=girTodo
syn keyword girTodo TODO FIXME NOTE WHY contained

hi def link girOpcode Statement
hi def link girKeyword Keyword
hi def link girOperandKind StorageClass
hi def link girName Identifier
hi def link girType Type
hi def link girMember Label
hi def link girNumber Number
hi def link girIndex LineNr
hi def link girString String
hi def link girDirective PreProc
hi def link girComment Comment
hi def link girTodo Todo

let b:current_syntax = "gir"
